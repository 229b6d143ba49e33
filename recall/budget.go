package recall

// cut turns the ranked candidates into results under the limit and token budget
// (docs/design.md#budget), greedily: a result that does not fit is skipped, as a shorter one
// further down may still fit. The budget counts the context block as Format writes it,
// each result's whole line and the header. With a deduper, list has not been deduped: a
// candidate the deduper drops is skipped, as dedupe would have dropped it.
func cut(req *Request, list []*candidate, d *deduper) []Result {
	var out []Result
	budget := newTokenBudget(req.TokenBudget, req.Now)
	for _, c := range list {
		if len(out) >= req.Limit {
			break
		}
		if d != nil && !d.keep(c) {
			continue
		}
		r := Result{Memory: c.mem, Content: c.mem.Content, Score: c.score, PUse: c.pUse, Volunteered: !c.direct()}
		if u := c.unitMem; u != nil && u.IsChunk() {
			r.Content = u.Content
			r.Fragment = &Fragment{ParentID: c.mem.ID, Index: u.ChunkIndex + 1, Count: c.mem.ChunkCount}
		}
		if !budget.take(r) {
			continue // a shorter one further down may still fit
		}
		if c.textRank > 0 {
			r.Reasons = append(r.Reasons, "text")
		}
		if c.vecRank > 0 {
			r.Reasons = append(r.Reasons, "vector")
		}
		if c.activation > 0 {
			r.Reasons = append(r.Reasons, "association")
		}
		if c.resurface > 0 {
			r.Reasons = append(r.Reasons, "resurface")
		}
		comps := c.comps
		r.Components = &comps
		out = append(out, r)
	}
	return out
}
