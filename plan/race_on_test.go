//go:build race

package plan

// raceDetector is set when the tests run with -race, which makes parsing
// the largest generated inputs slow.
const raceDetector = true
