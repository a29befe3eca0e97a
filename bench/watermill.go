package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
)

// The peer: watermill's router over its in-process gochannel pub/sub. The spout
// publishes to topic "in"; the optional relay handler republishes to "mid"; the
// null handler counts. The router acks every message when its handler returns,
// and gochannel waits for that ack before it treats the message as delivered.
// A spout message counts as complete when the null handler has handled its last
// copy; the spout keeps at most max pending messages open (a semaphore released
// there), like a reliable spout's max pending. Message ids are a decimal counter,
// cheaper than the UUIDs watermill users usually generate.

type watermillPipe struct {
	pubsub  *gochannel.GoChannel
	router  *message.Router
	cancel  context.CancelFunc
	tokens  chan struct{}
	stop    atomic.Bool
	stopped chan struct{}
	runErr  chan error
}

func startWatermill(s setup) (pipeline, error) {
	if !s.acked || s.shape == wordCount {
		return nil, errors.New("the watermill peer has the acked pipelines only")
	}
	logger := watermill.NopLogger{}
	ps := gochannel.NewGoChannel(gochannel.Config{OutputChannelBuffer: slots}, logger)
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, logger)
	if err != nil {
		return nil, err
	}
	w := &watermillPipe{pubsub: ps, router: router, tokens: make(chan struct{}, s.pending),
		stopped: make(chan struct{}), runErr: make(chan error, 1)}
	t := s.probe.tally() // handlers run concurrently: they add to its counter directly
	null := func(msg *message.Message) error {
		if at := int64(binary.LittleEndian.Uint64(msg.Payload)); at != 0 {
			s.probe.lat.record(time.Duration(stamp() - at))
		}
		t.c.n.Add(1)
		<-w.tokens
		return nil
	}
	sinkTopic := "in"
	if s.shape == twoHop {
		sinkTopic = "mid"
		router.AddHandler("relay", "in", ps, "mid", ps, func(msg *message.Message) ([]*message.Message, error) {
			return []*message.Message{message.NewMessage(msg.UUID, msg.Payload)}, nil
		})
	}
	router.AddNoPublisherHandler("null", sinkTopic, ps, null)
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() { w.runErr <- router.Run(ctx) }()
	select {
	case <-router.Running():
	case err := <-w.runErr:
		cancel()
		return nil, fmt.Errorf("watermill router: %w", err)
	}
	go w.spout(s)
	return w, nil
}

func (w *watermillPipe) spout(s setup) {
	defer close(w.stopped)
	lim := newLimiter(s.rate)
	for seq := uint64(1); !w.stop.Load(); seq++ {
		for !lim.take() {
			time.Sleep(s.spoutWait)
		}
		w.tokens <- struct{}{}
		payload := make([]byte, 8)
		if seq%sampleEvery == 0 {
			binary.LittleEndian.PutUint64(payload, uint64(stamp()))
		}
		if err := w.pubsub.Publish("in", message.NewMessage(strconv.FormatUint(seq, 10), payload)); err != nil {
			<-w.tokens
			return
		}
	}
}

func (w *watermillPipe) Stop() error {
	w.stop.Store(true)
	<-w.stopped
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for len(w.tokens) > 0 {
		if time.Now().After(deadline) {
			err = errors.New("watermill: messages still open 10 s after stop")
			break
		}
		time.Sleep(time.Millisecond)
	}
	err = errors.Join(err, w.router.Close())
	w.cancel()
	err = errors.Join(err, <-w.runErr, w.pubsub.Close())
	return err
}
