package kernels

func gatherGeneric[F float](s, w []F, ld int, ptr, ids []int32, vals []F, T, M int) {
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

func scatterGeneric[F float](g []F, ld int, p []F, ptr, ids []int32, vals []F, c F, T, M int) {
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
