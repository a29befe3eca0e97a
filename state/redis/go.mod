module github.com/goshelter/goshelter/state/redis

go 1.25.0

replace github.com/goshelter/goshelter => ../..

require (
	github.com/goshelter/goshelter v0.0.0
	github.com/redis/go-redis/v9 v9.17.3
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
)
