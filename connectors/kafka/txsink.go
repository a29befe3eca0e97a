package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/goshelter/goshelter/dsl"
)

// sinkConfig holds the sink's own options (a spout ignores them). Its zero
// value is the default: transactions under state, [DefaultTransactionTimeout]
// and [DefaultTransactionalIDPrefix].
type sinkConfig struct {
	atLeastOnce bool // WithoutTransactions
	txnPrefix   string
	txnPrefixed bool // txnPrefix was set, even to ""
	txnTimeout  time.Duration
}

// DefaultTransactionTimeout is the transaction timeout a sink asks for under
// state when [WithTransactionTimeout] does not set one. A checkpoint's
// transaction is open from its first record (just after the previous
// barrier) until the checkpoint committed, and, after a crash, until the
// next process recovered it: the timeout must exceed twice the checkpoint
// interval plus the longest restart, or the broker aborts a transaction
// whose checkpoint committed, and its records are lost. One minute leaves
// room for restarts; Kafka refuses more than its
// transaction.max.timeout.ms (15 minutes by default).
const DefaultTransactionTimeout = time.Minute

// DefaultTransactionalIDPrefix starts the transactional ids of every sink
// task that [WithTransactionalIDPrefix] does not change.
const DefaultTransactionalIDPrefix = "goshelter/"

// WithTransactionTimeout sets the transaction timeout of a sink under state
// (default [DefaultTransactionTimeout]); see it for what the timeout must
// cover. A task refuses to start with a timeout not above twice the
// topology's checkpoint interval. A spout ignores it.
func WithTransactionTimeout(d time.Duration) Option {
	return func(c *config) { c.sink.txnTimeout = d }
}

// WithTransactionalIDPrefix sets what starts the transactional ids of a sink
// under state (default [DefaultTransactionalIDPrefix]): a task's two ids are
// the prefix, then "<topology>/<component>/<task index>/<0 or 1>". The ids
// must be unique to the topology on the cluster, since a producer with the
// same id fences the other; two processes of one topology fence each other,
// which is what stops a zombie. A spout ignores it.
func WithTransactionalIDPrefix(prefix string) Option {
	return func(c *config) { c.sink.txnPrefix, c.sink.txnPrefixed = prefix, true }
}

// WithoutTransactions makes a sink at-least-once even in a topology with
// state: it acks each input on the broker's answer, as without state, and
// the checkpoint waits for those acks, so output is never lost, but records
// produced before a rollback are produced again after it. A spout ignores it.
func WithoutTransactions() Option {
	return func(c *config) { c.sink.atLeastOnce = true }
}

// txns is a task's pair of transactional producers. Inputs that follow the
// barrier of checkpoint n arrive before n commits, so n's transaction cannot
// take them: the pair alternates, one holding the prepared transaction of n
// until CommitCheckpoint(n), the other taking the inputs for n+1. The
// runtime calls CommitCheckpoint(n) before PrepareCheckpoint(n+1), so two
// are always enough. Every field is the task goroutine's.
type txns struct {
	ids      [2]string
	cls      [2]*kgo.Client
	cur      int  // the producer whose transaction takes the inputs now
	begun    bool // cur's transaction is begun
	dirty    bool // something was produced in cur's transaction
	prepared int  // the producer holding the prepared transaction, -1: none
	log      *zap.Logger
}

// newTxns creates the two producers of a task's sink under state.
func newTxns(info dsl.TaskInfo, sc sinkConfig, opts []kgo.Opt, log *zap.Logger) (*txns, error) {
	timeout := sc.txnTimeout
	if timeout == 0 {
		timeout = DefaultTransactionTimeout
	}
	if interval := info.Settings.CheckpointInterval; timeout <= 2*interval {
		return nil, fmt.Errorf("kafka: sink %q: transaction timeout %v is not above twice the checkpoint interval %v: "+
			"the broker would abort transactions whose checkpoint committed (WithTransactionTimeout)", info.Component, timeout, interval)
	}
	prefix := DefaultTransactionalIDPrefix
	if sc.txnPrefixed {
		prefix = sc.txnPrefix
	}
	t := &txns{prepared: -1, log: log}
	for i := range t.cls {
		t.ids[i] = fmt.Sprintf("%s%s/%s/%d/%d", prefix, info.Topology, info.Component, info.Index, i)
		cl, err := kgo.NewClient(append(opts[:len(opts):len(opts)], kgo.TransactionalID(t.ids[i]), kgo.TransactionTimeout(timeout))...)
		if err != nil {
			t.close()
			return nil, fmt.Errorf("kafka: sink %q: creating the producer of transactional id %q: %w", info.Component, t.ids[i], err)
		}
		t.cls[i] = cl
	}
	return t, nil
}

// close closes both producers without ending their transactions: a prepared
// one may belong to a committed checkpoint (the next incarnation commits it),
// and the next incarnation's producers fence and abort any other.
func (t *txns) close() {
	for _, cl := range t.cls {
		if cl != nil {
			cl.Close()
		}
	}
}

// producer returns the client to produce the next input on, in a begun
// transaction.
func (t *txns) producer() (*kgo.Client, int, error) {
	if !t.begun {
		if err := t.cls[t.cur].BeginTransaction(); err != nil {
			return nil, 0, fmt.Errorf("kafka: sink: beginning a transaction of %q: %w", t.ids[t.cur], err)
		}
		t.begun = true
	}
	t.dirty = true
	return t.cls[t.cur], t.cur, nil
}

// recoverCheckpoint commits the transaction that the last committed
// checkpoint prepared (harmless when it is committed already), then fences
// both transactional ids, which aborts any transaction still open on them:
// they belong to checkpoints that never committed, and will be replayed.
func (t *txns) recoverCheckpoint(ctx context.Context, prepared []byte) error {
	if prepared != nil {
		p, err := decodePrepared(prepared)
		if err != nil {
			return err
		}
		if err := t.commitRaw(ctx, p); err != nil {
			return err
		}
	}
	for i, cl := range t.cls {
		if _, _, err := cl.ProducerID(ctx); err != nil {
			return fmt.Errorf("kafka: sink: initialising the producer of transactional id %q: %w", t.ids[i], err)
		}
	}
	return nil
}

// commitRaw ends p's transaction with a commit sent as a raw EndTxn (the
// producer that began it is gone): Flink's recover-and-commit.
func (t *txns) commitRaw(ctx context.Context, p preparedTxn) error {
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = p.id, p.pid, p.epoch, true
	resp, err := req.RequestWith(ctx, t.cls[0])
	if err != nil {
		return fmt.Errorf("kafka: sink: committing the prepared transaction of %q (producer %d, epoch %d): %w", p.id, p.pid, p.epoch, err)
	}
	switch err := kerr.ErrorForCode(resp.ErrorCode); {
	case err == nil:
		return nil
	case errors.Is(err, kerr.InvalidTxnState), errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch):
		// The transaction ended already: committed by CommitCheckpoint
		// before the crash (and the id has moved on), or aborted by the
		// broker after the transaction timeout, which the timeout's
		// bound (DefaultTransactionTimeout) exists to prevent.
		t.log.Info("kafka: sink: the prepared transaction ended already",
			zap.String("transactional_id", p.id), zap.Int64("producer_id", p.pid), zap.Int16("epoch", p.epoch), zap.Error(err))
		return nil
	default:
		return fmt.Errorf("kafka: sink: committing the prepared transaction of %q (producer %d, epoch %d): %w", p.id, p.pid, p.epoch, err)
	}
}

// prepareCheckpoint flushes the transaction that took the inputs before
// checkpoint id's barrier and returns what identifies it, then switches the
// inputs to the other producer. A transaction with a failed record (failed
// reports it by producer, once the flush ran every promise) is not
// prepared: the checkpoint fails and the topology rolls back, and the
// transaction is aborted by the next incarnation's fencing.
func (t *txns) prepareCheckpoint(ctx context.Context, id uint64, failed func(producer int) bool) ([]byte, error) {
	if !t.dirty {
		return nil, nil // nothing produced: nothing to commit
	}
	cl, txID := t.cls[t.cur], t.ids[t.cur]
	if err := cl.Flush(ctx); err != nil {
		return nil, fmt.Errorf("kafka: sink: flushing transaction of %q for checkpoint %d: %w", txID, id, err)
	}
	if failed(t.cur) {
		return nil, fmt.Errorf("kafka: sink: a record of transaction %q failed: checkpoint %d cannot cover it", txID, id)
	}
	// Read after the flush: the producer id and epoch of this transaction
	// (a KIP-890 broker bumps the epoch at every transaction).
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafka: sink: reading the producer id of %q for checkpoint %d: %w", txID, id, err)
	}
	t.prepared, t.cur = t.cur, 1-t.cur
	t.begun, t.dirty = false, false
	return preparedTxn{id: txID, pid: pid, epoch: epoch}.encode(), nil
}

// commitCheckpoint commits the transaction prepared for checkpoint id, which
// the store has committed.
func (t *txns) commitCheckpoint(ctx context.Context, id uint64) error {
	if t.prepared < 0 {
		return nil
	}
	i := t.prepared
	t.prepared = -1
	if err := t.cls[i].EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("kafka: sink: committing transaction of %q for checkpoint %d: %w", t.ids[i], id, err)
	}
	return nil
}

// preparedTxn is what a checkpoint stores of the sink's transaction.
type preparedTxn struct {
	id    string
	pid   int64
	epoch int16
}

// preparedVersion is the first byte of an encoded preparedTxn.
const preparedVersion = 1

// encode is the version, the transactional id (length first), the producer
// id and the epoch, as varints.
func (p preparedTxn) encode() []byte {
	b := []byte{preparedVersion}
	b = binary.AppendUvarint(b, uint64(len(p.id)))
	b = append(b, p.id...)
	b = binary.AppendVarint(b, p.pid)
	return binary.AppendVarint(b, int64(p.epoch))
}

func decodePrepared(b []byte) (preparedTxn, error) {
	bad := func(what string) (preparedTxn, error) {
		return preparedTxn{}, fmt.Errorf("kafka: sink: the checkpoint's prepared transaction %x: %s", b, what)
	}
	if len(b) == 0 || b[0] != preparedVersion {
		return bad("unknown version")
	}
	rest := b[1:]
	n, size := binary.Uvarint(rest)
	if size <= 0 || n > uint64(len(rest)-size) {
		return bad("bad transactional id")
	}
	rest = rest[size:]
	p := preparedTxn{id: string(rest[:n])}
	rest = rest[n:]
	pid, size := binary.Varint(rest)
	if size <= 0 {
		return bad("bad producer id")
	}
	rest = rest[size:]
	epoch, size := binary.Varint(rest)
	if size <= 0 || size != len(rest) || epoch < 0 || epoch > 1<<15-1 {
		return bad("bad epoch")
	}
	p.pid, p.epoch = pid, int16(epoch)
	return p, nil
}
