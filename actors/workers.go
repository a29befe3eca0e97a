package actors

import "sync"

// workers runs an incarnation's mailboxes on goroutines that outlive one run
// of a mailbox. protoactor's default dispatcher starts a goroutine for every
// run: each starts on a small stack and grows it again through the task's
// call chain (a tenth of the acked path's CPU went to copying stacks), and a
// task woken often is woken that way every time. A worker that finished a run
// parks until the next mailbox needs one, with its stack grown.
//
// schedule hands a run to a parked worker, or starts a worker when none is
// parked, so runs never wait for each other. close lets parked workers exit;
// a run scheduled after it gets a worker of its own that exits when done.
type workers struct {
	work chan func()
	stop chan struct{}
	once sync.Once
}

func newWorkers() *workers {
	return &workers{work: make(chan func()), stop: make(chan struct{})}
}

func (w *workers) schedule(run func()) {
	select {
	case w.work <- run:
	default:
		go w.loop(run)
	}
}

func (w *workers) loop(run func()) {
	for {
		run()
		select {
		case run = <-w.work:
		case <-w.stop:
			return
		}
	}
}

// close ends the parked workers; the incarnation has stopped.
func (w *workers) close() { w.once.Do(func() { close(w.stop) }) }
