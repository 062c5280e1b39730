package plan

// interner returns one shared string for equal byte slices, so names and
// short values that repeat thousands of times in a plan cost one
// allocation. A small direct-mapped cache answers most lookups without
// hashing the whole key; the map behind it holds at most limit strings.
type interner struct {
	recent [1024]string
	all    map[string]string
	limit  int
}

func newInterner(limit int) *interner {
	return &interner{all: make(map[string]string, 64), limit: limit}
}

// trim empties the interner once it is full, so that a long-lived one
// keeps sharing the strings of the inputs it sees now.
func (in *interner) trim() {
	if len(in.all) >= in.limit {
		clear(in.all)
		in.recent = [len(in.recent)]string{}
	}
}

func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	h := (uint(len(b))*31 + uint(b[0])*7 + uint(b[len(b)/2])*3 + uint(b[len(b)-1])) % uint(len(in.recent))
	if s := in.recent[h]; s == string(b) {
		return s
	}
	s, ok := in.all[string(b)]
	if !ok {
		s = string(b)
		if len(in.all) < in.limit {
			in.all[s] = s
		}
	}
	in.recent[h] = s
	return s
}
