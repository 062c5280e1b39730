//go:build race

package cli

// raceDetector is set when the tests run with -race, which makes the
// largest generated inputs too slow to render in every format.
const raceDetector = true
