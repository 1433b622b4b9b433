package herald

// Closest returns the candidate most like name, or "" when none is close
// enough to be worth suggesting ("did you mean …?"). Similarity is
// 2·matches/(len a + len b) over the longest common subsequence, with the
// same 0.6 cutoff Python's difflib uses for Hermes' suggestions.
func Closest(name string, candidates []string) string {
	best, bestScore := "", 0.6
	for _, c := range candidates {
		if c == name {
			return c
		}
		if s := similarity(name, c); s >= bestScore {
			best, bestScore = c, s
		}
	}
	return best
}

func similarity(a, b string) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return 2 * float64(prev[len(b)]) / float64(len(a)+len(b))
}
