package observe

// ProgressOf is Progress with the channel closed when its lines have ended,
// so that the package's black-box tests await the end instead of timing it.
var ProgressOf = progressOf
