package report

// histogramCDF is a logHistogram's CDF at each populated bin's upper edge.
func histogramCDF(h *logHistogram) (xs, ys []float64) {
	total := h.total()
	if total == 0 {
		return nil, nil
	}
	var run int64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		run += c
		xs, ys = append(xs, h.upper(i)), append(ys, float64(run)/float64(total))
	}
	return xs, ys
}
