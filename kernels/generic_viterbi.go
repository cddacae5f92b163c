package kernels

func viterbiGeneric(delta []float64, bp []int32, s, tr []float64, T, M int) {
	copy(delta[:M], s[:M])
	for t := 1; t < T; t++ {
		prev := delta[(t-1)*M : t*M]
		cur := delta[t*M : (t+1)*M]
		arg := bp[t*M : (t+1)*M]
		d0 := prev[0]
		for j, v := range tr[:M] {
			cur[j] = d0 + v
			arg[j] = 0
		}
		for i := 1; i < M; i++ {
			di := prev[i]
			row := tr[i*M : (i+1)*M]
			for j, v := range row {
				if c := di + v; c > cur[j] {
					cur[j] = c
					arg[j] = int32(i)
				}
			}
		}
		st := s[t*M : (t+1)*M]
		for j := range cur {
			cur[j] += st[j]
		}
	}
}
