// Package crfbeam tags and evaluates text with simdcrf on Apache Beam, so
// that the work of one machine can be spread over a cluster (Dataflow,
// Flink, Spark) or run on Beam's local runner (Prism).
//
// The transforms:
//
//   - Read reads the sequences of the files a glob matches, in any format
//     simdcrf tag reads, each keyed by its file and its index there. Large
//     files are split into byte ranges at the blank lines between
//     sequences (a splittable DoFn over format.BlockReader's positions),
//     so one file does not land on one worker.
//   - Tag tags them with a model that each worker process loads once
//     (LoadModel: a cache keyed by path, read through Beam's file systems,
//     so gs:// and s3:// work as local paths do) and prints each as
//     simdcrf tag does (model.AppendText).
//   - Evaluate scores them against their reference labels with a
//     CombineFn over eval.Evaluator, giving what simdcrf tag -t gives.
//   - Write, WriteErrors and WriteEvaluation write sharded output in
//     input order, dead letters and the evaluation.
//
// Malformed sequences do not stop a pipeline: they go to a dead-letter
// PCollection with their file, line and error (FailOnError makes the first
// one fail it). Build puts the transforms together as the command
// simdcrf-beam tag does.
package crfbeam
