# fsbench: the two Quick-start commands and their parts.
#   make demo   install what is missing, build, compare ext4 and xfs on loop-backed images
#   make test   install test dependencies, run every test (as root nothing is skipped), then the
#               multi-client tests again in a build with MPI (`--features mpi`, under mpirun)

CARGO ?= cargo
FSBENCH := target/release/fsbench

.PHONY: demo test deps test-deps build lint bench

demo: deps build
	$(FSBENCH) compare ext4 xfs --scale quick

test: test-deps
	$(CARGO) test --all-targets
	$(CARGO) test --features mpi --test mpi

deps:
	scripts/install-deps.sh

test-deps:
	scripts/install-deps.sh test mpi

build:
	$(CARGO) build --release

lint:
	$(CARGO) fmt --check
	# The filesystem plug-ins are declared inside a registry macro, which cargo fmt does not enter.
	rustfmt --check --edition 2021 src/testbed/fs/*.rs
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) clippy --all-targets --features mpi -- -D warnings

bench: build
	scripts/install-deps.sh bench
	bench/vs-fio.sh --fsbench $(FSBENCH)
	if [ "$$(id -u)" = 0 ]; then bench/uring-vs-fio.sh --fsbench $(FSBENCH); else echo "bench/uring-vs-fio.sh skipped: needs root (loop devices)"; fi
