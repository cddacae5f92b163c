// driver.js runs CRFsuite through the npm package "crfsuite" (its N-API binding)
// on a CRFsuite attribute file, for the simdcrf benchmarks. It is embedded in the
// Go package bench/crfsuite and written next to node_modules by Ensure.
//
//   node driver.js train --data FILE --model FILE [--json FILE] [NAME=VALUE]...
//   node driver.js tag --model FILE --data FILE [--output FILE] [--json FILE]
//
// The result is one JSON object, written to --json FILE or else to stderr. With
// train, CRFsuite's own training log goes to stdout: the binding prints it with
// std::cout and offers no callback, so the caller parses iterations and loss from it.
//
// The binding passes attribute names only (every value is 1) and has no instance
// weights, so attribute values other than 1 and "@weight:" lines are errors here.
"use strict";

const fs = require("fs");
const path = require("path");
const { performance } = require("perf_hooks");

const crfsuite = require(path.join(__dirname, "node_modules", "crfsuite"));

function fail(msg) {
  process.stderr.write("crfsuite driver: " + msg + "\n");
  process.exit(2);
}

// readSequences calls fn(labels, items, line) for every sequence of a CRFsuite
// attribute file: LABEL<TAB>attr[:value]<TAB>..., a blank line between sequences.
// Fields are split on TAB; within a field a backslash escapes the next character
// ("\:" is a colon in the name, "\\" a backslash) and the first unescaped colon
// starts the value, as CRFsuite's reader (frontend/iwa.c) does. The file is read
// in 4 MiB blocks so a large file is never held whole as a JS string.
function readSequences(file, fn) {
  const fd = fs.openSync(file, "r");
  const buf = Buffer.allocUnsafe(4 << 20);
  let rest = "";
  let lineNo = 0;
  let labels = [];
  let items = [];
  let first = 0;
  const flush = () => {
    if (labels.length > 0) fn(labels, items, first);
    labels = [];
    items = [];
  };
  const onLine = (line) => {
    lineNo++;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line === "") {
      flush();
      return;
    }
    if (line.startsWith("@")) {
      fail(`${file}:${lineNo}: declaration ${JSON.stringify(line.split("\t")[0])}: the npm binding has no instance weights`);
    }
    const fields = line.split("\t");
    if (labels.length === 0) first = lineNo;
    labels.push(unescapeField(fields[0], file, lineNo, true));
    const attrs = [];
    for (let i = 1; i < fields.length; i++) {
      if (fields[i] === "") continue;
      attrs.push(unescapeField(fields[i], file, lineNo, false));
    }
    items.push(attrs);
  };
  for (;;) {
    const n = fs.readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    // Cut at the last newline so no UTF-8 sequence is split.
    let end = buf.lastIndexOf(10, n - 1);
    if (end < 0) {
      rest += buf.toString("utf8", 0, n); // a line longer than the block; rare
      continue;
    }
    const text = rest + buf.toString("utf8", 0, end);
    // Keep the bytes after the last newline for the next block.
    rest = buf.toString("utf8", end + 1, n);
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl < 0) {
        onLine(text.slice(start));
        break;
      }
      onLine(text.slice(start, nl));
      start = nl + 1;
    }
  }
  fs.closeSync(fd);
  if (rest !== "") onLine(rest);
  flush();
}

// unescapeField returns the attribute name (or label) of one field, checking that
// an attribute's value, if any, is 1: the binding cannot pass any other. A label's
// value is ignored, as CRFsuite's reader does.
function unescapeField(f, file, line, isLabel) {
  if (f.indexOf("\\") < 0) {
    const c = f.indexOf(":");
    if (c < 0) return f;
    if (!isLabel) checkValue(f.slice(c + 1), file, line);
    return f.slice(0, c);
  }
  let name = "";
  for (let i = 0; i < f.length; i++) {
    const ch = f[i];
    if (ch === "\\" && i + 1 < f.length) {
      name += f[++i];
    } else if (ch === ":") {
      if (!isLabel) checkValue(f.slice(i + 1), file, line);
      return name;
    } else {
      name += ch;
    }
  }
  return name;
}

function checkValue(v, file, line) {
  const x = Number(v);
  if (v === "" || Number.isNaN(x)) fail(`${file}:${line}: attribute value ${JSON.stringify(v)} is not a number`);
  if (x !== 1) fail(`${file}:${line}: attribute value ${v}: the npm binding passes names only (value 1)`);
}

function vmHWM() {
  try {
    const m = /VmHWM:\s*(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch (e) {
    return 0;
  }
}

function rss() {
  return process.memoryUsage().rss;
}

function result(obj, jsonFile) {
  const ru = process.resourceUsage();
  // VmHWM, the peak RSS of this process's own memory: ru_maxrss would also
  // count the RSS of the process that spawned node (Linux carries it over
  // a vfork and exec).
  obj.peak_rss_bytes = vmHWM() || ru.maxRSS * 1024;
  obj.user_seconds = ru.userCPUTime / 1e6;
  obj.system_seconds = ru.systemCPUTime / 1e6;
  obj.process_seconds = performance.now() / 1000; // since node's time origin
  const text = JSON.stringify(obj) + "\n";
  if (jsonFile) {
    const tmp = jsonFile + ".tmp" + process.pid;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, jsonFile);
  } else {
    process.stderr.write(text);
  }
}

function parseArgs(argv) {
  const o = { params: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--")) {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      o[a.slice(2)] = argv[++i];
    } else if (a.includes("=")) {
      const eq = a.indexOf("=");
      o.params[a.slice(0, eq)] = a.slice(eq + 1);
    } else {
      fail(`unexpected argument ${JSON.stringify(a)}`);
    }
  }
  return o;
}

function train(o) {
  if (!o.data || !o.model) fail("train needs --data and --model");
  const baseline = rss();
  const trainer = new crfsuite.Trainer({ debug: true });
  // An unknown name makes the binding throw a C++ exception it does not catch
  // (the process aborts), so check names against the trainer's own list.
  const known = trainer.get_params({});
  for (const k of Object.keys(o.params)) {
    if (!(k in known)) fail(`unknown parameter ${k} (known: ${Object.keys(known).join(", ")})`);
  }
  trainer.set_params(o.params);
  let t0 = performance.now();
  let seqs = 0;
  let tokens = 0;
  readSequences(o.data, (labels, items) => {
    trainer.append(items, labels);
    seqs++;
    tokens += labels.length;
  });
  const readSeconds = (performance.now() - t0) / 1000;
  const rssRead = rss();
  t0 = performance.now();
  const status = trainer.train(o.model);
  const trainSeconds = (performance.now() - t0) / 1000;
  if (status !== 0) fail(`training failed with status ${status}`);
  result(
    {
      mode: "train",
      sequences: seqs,
      tokens: tokens,
      read_seconds: readSeconds,
      train_seconds: trainSeconds,
      params: trainer.get_params({}),
      baseline_rss_bytes: baseline,
      read_rss_bytes: rssRead,
    },
    o.json,
  );
}

function tag(o) {
  if (!o.data || !o.model) fail("tag needs --data and --model");
  const baseline = rss();
  let t0 = performance.now();
  const tagger = new crfsuite.Tagger();
  if (!tagger.open(o.model)) fail(`${o.model}: cannot open the model`);
  const loadSeconds = (performance.now() - t0) / 1000;
  const out = [];
  let tagNs = 0n;
  let seqs = 0;
  let tokens = 0;
  let correct = 0;
  let seqCorrect = 0;
  t0 = performance.now();
  readSequences(o.data, (labels, items) => {
    const s = process.hrtime.bigint();
    const pred = tagger.tag(items); // the label array itself
    tagNs += process.hrtime.bigint() - s;
    let ok = 0;
    for (let i = 0; i < pred.length; i++) if (pred[i] === labels[i]) ok++;
    correct += ok;
    if (ok === labels.length) seqCorrect++;
    tokens += labels.length;
    seqs++;
    if (o.output) out.push(pred.join("\n") + "\n\n");
  });
  const wallSeconds = (performance.now() - t0) / 1000;
  if (o.output) {
    const tmp = o.output + ".tmp" + process.pid;
    fs.writeFileSync(tmp, out.join(""));
    fs.renameSync(tmp, o.output);
  }
  const tagSeconds = Number(tagNs) / 1e9;
  result(
    {
      mode: "tag",
      sequences: seqs,
      tokens: tokens,
      correct: correct,
      item_accuracy: tokens > 0 ? correct / tokens : 0,
      instance_accuracy: seqs > 0 ? seqCorrect / seqs : 0,
      load_seconds: loadSeconds,
      read_tag_seconds: wallSeconds,
      tag_seconds: tagSeconds,
      tokens_per_second: tagSeconds > 0 ? tokens / tagSeconds : 0,
      baseline_rss_bytes: baseline,
    },
    o.json,
  );
}

const [mode, ...args] = process.argv.slice(2);
const opts = parseArgs(args);
if (mode === "train") train(opts);
else if (mode === "tag") tag(opts);
else fail("usage: driver.js train|tag --data FILE --model FILE [--json FILE] [--output FILE] [NAME=VALUE]...");
