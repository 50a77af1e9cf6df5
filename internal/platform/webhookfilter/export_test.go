package webhookfilter

// Eval is MatchDoc telling also the steps it took, for the tests that hold every
// evaluation to the bound Parse counted (Steps).
func (f *Filter) Eval(d Doc) (bool, int, error) { return f.eval(d) }
