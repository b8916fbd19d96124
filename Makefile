# The two commands that work on a fresh clone: `make run` and `make test`.
.PHONY: setup build run test lint typecheck bench clean

NODE_MODULES_STAMP := node_modules/.package-lock.json

setup: $(NODE_MODULES_STAMP)

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund

build: setup
	npm run build --silent

# The main job on the embedded defaults: WORKFLOW.example.md with the mock runtime over a fresh
# copy of testdata/issues.example.json (state under .orchestrator/demo, reset on every run).
run: build
	rm -rf .orchestrator/demo && mkdir -p .orchestrator/demo
	cp testdata/issues.example.json .orchestrator/demo/issues.json
	node dist/cli/main.js validate WORKFLOW.example.md
	node dist/cli/main.js run --dry-run WORKFLOW.example.md
	node dist/cli/main.js run --until-idle --log-format pretty WORKFLOW.example.md
	@echo "Final issue states (.orchestrator/demo/issues.json):"
	@node -e "for (const i of JSON.parse(require('fs').readFileSync('.orchestrator/demo/issues.json','utf8'))) console.log('  ' + i.identifier.padEnd(8) + i.state.padEnd(13) + (i.comments || []).length + ' comments')"

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
