package train

import "fmt"

func (t *trainer) sgd(theta []float64) (qnResult, error) {
	return qnResult{}, fmt.Errorf("train: sgd not implemented yet")
}

func (t *trainer) perceptron(theta []float64) (qnResult, error) {
	return qnResult{}, fmt.Errorf("train: ap not implemented yet")
}
