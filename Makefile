# The two commands that work on a fresh clone: `make run` and `make test`.
.PHONY: setup build run demo test lint typecheck bench clean

NODE_MODULES_STAMP := node_modules/.package-lock.json

setup: $(NODE_MODULES_STAMP)

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund

build: setup
	@npm run build --silent

# The main job on the embedded defaults: WORKFLOW.example.md with the mock runtime over a fresh
# copy of testdata/issues.example.json (state under .orchestrator/demo, reset on every run). It
# ends with a table of where each issue ended and why; on a terminal the dashboard then stays up
# until Ctrl-C, anywhere else (CI, a pipe) the target ends by itself.
run: build
	@$(MAKE) --no-print-directory demo

# The demo alone, on the CLI already built (`make run` builds first).
demo:
	@rm -rf .orchestrator/demo && mkdir -p .orchestrator/demo
	@cp testdata/issues.example.json .orchestrator/demo/issues.json
	@echo '$$ orchestrator validate WORKFLOW.example.md'
	@node dist/cli/main.js validate WORKFLOW.example.md
	@echo '$$ orchestrator run --dry-run WORKFLOW.example.md'
	@node dist/cli/main.js run --dry-run WORKFLOW.example.md
	@if [ -t 1 ]; then keep=' --keep-serving'; else keep=''; fi; \
	echo "\$$ orchestrator run --until-idle$$keep --log-format pretty WORKFLOW.example.md"; \
	node dist/cli/main.js run --until-idle$$keep --log-format pretty WORKFLOW.example.md

lint: setup
	npx biome check .

typecheck: setup
	npx tsc -p tsconfig.json --noEmit

# Lint, typecheck and every test; writes test-results/vitest.json for the CI summary.
test: setup lint typecheck build
	mkdir -p test-results
	npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json

bench: build
	node --import tsx test/bench/run.ts

clean:
	rm -rf dist test-results
