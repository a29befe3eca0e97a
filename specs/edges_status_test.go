package specs_test

// The status server under idle clients (issue 20, item 6): browsers and
// scrapers keep connections open between requests; however many sit idle,
// a fresh request is answered at once.

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/goshelter/goshelter/observe"
)

// statusConn is a client's end of a kept-alive connection.
type statusConn struct {
	net.Conn
	rd *bufio.Reader
}

// statusIdleClient sends one keep-alive request on a connection of its own,
// reads the whole answer within a second and leaves the connection open.
func statusIdleClient(addr string, i int) statusConn {
	GinkgoHelper()
	c, err := net.Dial("tcp", addr)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(c.Close)
	Expect(c.SetDeadline(time.Now().Add(Scaled(time.Second)))).To(Succeed())
	_, err = io.WriteString(c, "GET /api/v1/topology/summary HTTP/1.1\r\nHost: status\r\n\r\n")
	Expect(err).NotTo(HaveOccurred())
	rd := bufio.NewReader(c)
	resp, err := http.ReadResponse(rd, nil)
	Expect(err).NotTo(HaveOccurred(), "keep-alive client %d (the others idle) got no answer within a second", i)
	_, err = io.Copy(io.Discard, resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.Body.Close()).To(Succeed())
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
	Expect(resp.Close).To(BeFalse(), "the server would not keep the connection alive")
	return statusConn{c, rd}
}

// statusHungUp counts the idle clients the server has hung up on, giving
// each a second to see it.
func statusHungUp(idle []statusConn) int {
	var hungUp atomic.Int64
	var wg sync.WaitGroup
	for _, c := range idle {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(Scaled(time.Second)))
			if _, err := c.rd.ReadByte(); err == io.EOF {
				hungUp.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(hungUp.Load())
}

var _ = Describe("The status server under idle clients", Label("edges", "observability"), func() {
	It("answers a fresh request within a second while 300 idle keep-alive connections are open", func() {
		r, topo := obsRunChain("edges-status")
		srv, err := observe.Listen("127.0.0.1:0", topo, r)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Close)

		// Each client is itself a fresh request while the ones before it sit
		// idle: a cap that counted idle connections stops answering past it.
		idle := make([]statusConn, 300)
		for i := range idle {
			idle[i] = statusIdleClient(srv.Addr, i)
		}
		fresh := &http.Client{Timeout: Scaled(time.Second), Transport: &http.Transport{DisableKeepAlives: true}}
		for _, path := range []string{"/", "/api/v1/topology/summary"} {
			resp, err := fresh.Get("http://" + srv.Addr + path)
			Expect(err).NotTo(HaveOccurred(), "GET %s with 300 idle connections open", path)
			_, err = io.Copy(io.Discard, resp.Body)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Body.Close()).To(Succeed())
			Expect(resp.StatusCode).To(Equal(http.StatusOK), path)
		}

		By("closing the idle connections beyond its cap of 64, so they hold no file descriptors")
		Expect(statusHungUp(idle)).To(BeNumerically(">=", len(idle)-64))
	})
})
