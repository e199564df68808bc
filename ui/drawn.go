package ui

import "slices"

// drawn is what a chart was last drawn from, and the drawing: Views are asked for on every
// frame, and a chart is redrawn only when its input or its size changed.
type drawn[T comparable] struct {
	w, h int
	in   []T // what view was drawn from, oldest first
	view string
}

// stale reports whether in at w×h differs from what view was drawn from; when it does, it
// keeps in and the size for the redraw that follows.
func (d *drawn[T]) stale(in []T, w, h int) bool {
	if w == d.w && h == d.h && slices.Equal(in, d.in) && d.view != "" {
		return false
	}
	d.w, d.h = w, h
	d.in = append(d.in[:0], in...)
	return true
}
