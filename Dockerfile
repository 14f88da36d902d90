# podsim as an image, for running `podsim explore` as a Kubernetes Indexed Job
# (deploy/explore-job.yaml; README "Seed sweeps on a Kubernetes cluster").
#   docker build -t podsim:dev .
#   docker run --rm -v "$PWD/examples:/scenario:ro" podsim:dev \
#     explore /scenario/explore-kubelet-restart.yaml --seeds 1..100 --shard 0/4
# The build stage compiles the workspace and `pnpm deploy`s the harness package (its dist and
# production dependencies, the other @podsim packages injected); the image runs it as a
# non-root user (numeric, so that a pod's runAsNonRoot can check it). The scenario is a mounted
# file or ConfigMap; results go to stdout (kubectl logs) or `--out DIR` on a volume.
FROM node:20-slim AS build
WORKDIR /src
RUN corepack enable
# The lockfile first: `pnpm fetch` fills the store in a layer that only a lockfile change rebuilds.
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
RUN pnpm fetch
COPY tsconfig.base.json tsconfig.json ./
COPY packages ./packages
# The workspace's other members (pnpm-workspace.yaml) and the scenario examples some tests read.
COPY examples ./examples
RUN pnpm install --frozen-lockfile --offline \
 && pnpm build \
 && pnpm --filter @podsim/harness deploy --prod /app

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
# The node image's `node` user (uid 1000); the code stays owned by root, read-only to it.
USER 1000:1000
ENTRYPOINT ["node", "/app/dist/src/cli.js"]
CMD ["--help"]
