package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/goshelter/goshelter/state"
)

// commitScript applies a checkpoint if its ID is above the committed one and
// the committed one is its Previous, and returns the ID committed before,
// whether it applied or not.
//
// KEYS[1] is the committed ID's key, KEYS[2:] the spaces' hashes. ARGV[1] is
// the checkpoint's ID, ARGV[2] its Previous, then a change is ARGV[i] = the index of its space's
// key in KEYS, ARGV[i+1] = "s" (set) or "d" (delete), ARGV[i+2] = the key,
// and for a set ARGV[i+3] = the value.
//
// IDs are 20-digit decimal strings: Lua's numbers are doubles and lose
// integers above 2^53, but digit strings of equal length compare as the
// numbers do. Redis does not roll a script back when a command in it fails,
// so everything that could fail is checked before the first write; the
// shebang makes Redis refuse the script as a whole when it is out of memory,
// instead of failing the first write inside it.
var commitScript = redis.NewScript(`#!lua
local committed = redis.call('GET', KEYS[1]) or '00000000000000000000'
if committed >= ARGV[1] or committed ~= ARGV[2] then
  return committed
end
for i = 2, #KEYS do
  local t = redis.call('TYPE', KEYS[i])['ok']
  if t ~= 'hash' and t ~= 'none' then
    return redis.error_reply('key ' .. KEYS[i] .. ' holds a ' .. t .. ', not a hash')
  end
end
local i = 3
while i <= #ARGV do
  local key = KEYS[tonumber(ARGV[i])]
  if ARGV[i + 1] == 'd' then
    redis.call('HDEL', key, ARGV[i + 2])
    i = i + 3
  else
    redis.call('HSET', key, ARGV[i + 2], ARGV[i + 3])
    i = i + 4
  end
end
redis.call('SET', KEYS[1], ARGV[1])
return committed
`)

// Store is a [state.Store] in Redis. Create it with [New].
type Store struct {
	client redis.UniversalClient
	name   string // the server and prefix, for errors
	idKey  string
	// spaceKey is the prefix of the spaces' hashes.
	spaceKey string
	closed   atomic.Bool
}

// New returns a store that keeps its checkpoints in client's server, under
// keys that start with {prefix}. The prefix names the topology: stores with
// the same prefix share their checkpoints, as the incarnations of one
// topology must. New panics if prefix is empty.
//
// The store does not own client: Close leaves it open.
func New(client redis.UniversalClient, prefix string) *Store {
	if prefix == "" {
		// "{}" is no hash tag: the keys would spread over a cluster's slots.
		panic("state/redis: New with an empty prefix")
	}
	tag := "{" + prefix + "}"
	return &Store{
		client:   client,
		name:     serverName(client) + " " + tag,
		idKey:    tag + ":id",
		spaceKey: tag + ":s:",
	}
}

// serverName returns the addresses client connects to, as far as its type
// tells them.
func serverName(client redis.UniversalClient) string {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().Addr
	case *redis.ClusterClient:
		return strings.Join(c.Options().Addrs, ",")
	case *redis.Ring:
		var addrs []string
		for _, a := range c.Options().Addrs {
			addrs = append(addrs, a)
		}
		slices.Sort(addrs)
		return strings.Join(addrs, ",")
	}
	return fmt.Sprintf("%T", client)
}

func (s *Store) errorf(format string, args ...any) error {
	return fmt.Errorf("state/redis: %s: "+format, append([]any{s.name}, args...)...)
}

// check returns the error a call must return before it starts: the store is
// closed or ctx is done.
func (s *Store) check(ctx context.Context, op string) error {
	if s.closed.Load() {
		return s.errorf("%s: %w", op, state.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return s.errorf("%s: %w", op, err)
	}
	return nil
}

// Committed returns the ID of the last committed checkpoint, 0 if none.
func (s *Store) Committed(ctx context.Context) (uint64, error) {
	if err := s.check(ctx, "read committed ID"); err != nil {
		return 0, err
	}
	v, err := s.client.Get(ctx, s.idKey).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, s.errorf("read committed ID: %w", err)
	}
	id, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, s.errorf("read committed ID: key %s: %w", s.idKey, err)
	}
	return id, nil
}

// Scan calls fn for every key of space in ascending byte order, as of the
// last checkpoint committed when Scan was called. It reads the space with
// one HGETALL, which sees one checkpoint, and sorts the keys itself: it holds
// the whole space in memory, and costs O(n log n) for n keys.
func (s *Store) Scan(ctx context.Context, space string, fn func(key, value []byte) error) error {
	if err := s.check(ctx, "scan "+strconv.Quote(space)); err != nil {
		return err
	}
	kv, err := s.client.HGetAll(ctx, s.spaceKey+space).Result()
	if err != nil {
		return s.errorf("scan %q: %w", space, err)
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys) // strings compare bytewise, as bytes.Compare does
	var key, value []byte
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return s.errorf("scan %q: %w", space, err)
		}
		key = append(key[:0], k...)
		value = append(value[:0], kv[k]...)
		if err := fn(key, value); err != nil {
			return err
		}
	}
	return nil
}

// Commit applies c's changes and records c.ID as committed with one script,
// atomically. It returns an error wrapping [state.ErrStale] when c.ID is not
// above the committed ID, and one wrapping [state.ErrDiverged] when the
// committed ID is not c.Previous (a server restarted without its data, or
// flushed). An error other than those or ctx's, once the
// script was sent (a lost connection), leaves the outcome unknown: Committed
// tells whether c was committed.
//
// The server runs nothing else while it applies the script, so a checkpoint
// of many changes holds up the server's other clients for that time.
func (s *Store) Commit(ctx context.Context, c state.Checkpoint) error {
	if err := s.check(ctx, fmt.Sprintf("commit checkpoint %d", c.ID)); err != nil {
		return err
	}
	id := formatID(c.ID)
	keys := []string{s.idKey}
	index := make(map[string]string) // space -> its key's index in keys, in Lua's 1-based numbering
	previous := formatID(c.Previous)
	args := make([]any, 2, 2+4*len(c.Changes))
	args[0], args[1] = id, previous
	for _, ch := range c.Changes {
		i, ok := index[ch.Space]
		if !ok {
			keys = append(keys, s.spaceKey+ch.Space)
			i = strconv.Itoa(len(keys))
			index[ch.Space] = i
		}
		// go-redis writes []byte arguments as they are, before Run returns.
		if ch.Delete {
			args = append(args, i, "d", ch.Key)
		} else {
			args = append(args, i, "s", ch.Key, ch.Value)
		}
	}
	prev, err := commitScript.Run(ctx, s.client, keys, args...).Text()
	if err != nil {
		return s.errorf("commit checkpoint %d: %w", c.ID, err)
	}
	if prev >= id || prev != previous {
		committed, err := strconv.ParseUint(prev, 10, 64)
		if err != nil {
			return s.errorf("commit checkpoint %d: key %s: %w", c.ID, s.idKey, err)
		}
		if prev >= id {
			return s.errorf("commit checkpoint %d, committed %d: %w", c.ID, committed, state.ErrStale)
		}
		return s.errorf("commit checkpoint %d after %d, committed %d: %w", c.ID, c.Previous, committed, state.ErrDiverged)
	}
	return nil
}

// formatID writes id as the script compares IDs: 20 decimal digits, the
// most a uint64 needs.
func formatID(id uint64) string {
	s := strconv.FormatUint(id, 10)
	return strings.Repeat("0", 20-len(s)) + s
}

// Close marks the store closed; its other methods return [state.ErrClosed]
// afterwards. It leaves the client open: the client is the caller's. Close is
// idempotent.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

var _ state.Store = (*Store)(nil)
