package kernels

func gatherGeneric(s, w []float64, ld int, ptr, ids []int32, vals []float64, T, M int) {
	for t := 0; t < T; t++ {
		row := s[t*M : (t+1)*M]
		for f := ptr[t]; f < ptr[t+1]; f++ {
			v := vals[f]
			wr := w[int(ids[f])*ld : int(ids[f])*ld+M]
			for j, x := range wr {
				row[j] += v * x
			}
		}
	}
}

func scatterGeneric(g []float64, ld int, p []float64, ptr, ids []int32, vals []float64, c float64, T, M int) {
	for t := 0; t < T; t++ {
		row := p[t*M : (t+1)*M]
		for f := ptr[t]; f < ptr[t+1]; f++ {
			v := c * vals[f]
			gr := g[int(ids[f])*ld : int(ids[f])*ld+M]
			for j, x := range row {
				gr[j] += v * x
			}
		}
	}
}
