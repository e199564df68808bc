//go:build race

package main

// raceBuild makes the binary under test race-enabled too when the tests run with -race.
const raceBuild = true
