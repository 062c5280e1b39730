package config

import "strings"

// closest returns the candidate nearest to s (case-insensitive edit
// distance, transpositions counting once), or "" when none is near enough
// to be a likely typo. Ties go to the earlier candidate.
func closest(s string, candidates []string) string {
	best, bestDist := "", -1
	ls := strings.ToLower(s)
	for _, c := range candidates {
		d := editDistance(ls, strings.ToLower(c))
		limit := max(1, (len([]rune(c))+1)/3)
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Keys longer than any candidate by this much cannot be near.
	if len(ra) > len(rb)+64 || len(rb) > len(ra)+64 {
		return max(len(ra), len(rb))
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
