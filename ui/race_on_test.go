//go:build race

package ui

// raceBuild coarsens the layout property test under the race detector, which makes every
// render several times slower.
const raceBuild = true
