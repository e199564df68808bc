//go:build race

package e2e

// raceBuild makes the binary under test race-enabled too when the tests run with -race.
const raceBuild = true
