// Package redis keeps a topology's checkpoints in Redis: [New] returns a
// [state.Store] that commits each checkpoint with one Lua script, which checks
// the checkpoint's ID and applies all its changes atomically. It lives in a
// module of its own, so applications that use only goshelter's core never
// have a Redis client in their module graph.
//
// # Keys
//
// A store's keys all start with its prefix in braces: {prefix}:id holds the
// committed ID, and {prefix}:s:<space> is a hash of a space's keys. The
// braces put them in one Redis Cluster hash slot, which a script touching
// them all needs; several topologies share a server under different prefixes.
//
// # Durability
//
// Commit is as durable as the server makes it: with appendonly yes and
// appendfsync always, a checkpoint is on disk when Commit returns, and Redis
// replays a script's writes as a whole or not at all after a crash. With
// Redis's defaults (snapshots now and then) a crash loses the latest
// checkpoints, though never a part of one.
//
// The script declares itself with a shebang, so it needs Redis 7 or later
// (or a server compatible with it, such as Valkey).
package redis
