package supervision

import "github.com/asynkron/protoactor-go/actor"

// supervisor parents every task actor. It implements protoactor-go's
// SupervisorStrategy itself: a failed task is left suspended and reported, and the
// Running loop replaces the whole incarnation.
type supervisor struct{ r *Running }

type spawnRequest struct {
	props *actor.Props
	name  string
	reply chan spawnReply
}

type spawnReply struct {
	pid *actor.PID
	err error
}

func (s *supervisor) Receive(ctx actor.Context) {
	if req, ok := ctx.Message().(*spawnRequest); ok {
		pid, err := ctx.SpawnNamed(req.props, req.name)
		req.reply <- spawnReply{pid: pid, err: err}
	}
}

// HandleFailure implements actor.SupervisorStrategy.
func (s *supervisor) HandleFailure(_ *actor.ActorSystem, _ actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	s.r.onFailure(child, reason)
}
