// What `graphrun --help` prints: every command, each serve/runner flag with
// its variable and default (the client commands' flags are in their own
// --help). README.md's CLI section says the same in a table.
import { DEFAULT_DATA } from './cli-storage-options.ts';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8189;

export const USAGE = `Usage: graphrun serve [options]
       graphrun runner [options]
       graphrun run <workflow.json> [--input NODE.INPUT=file ...] [--out dir] [--json]
       graphrun jobs [--status status,...] [--limit n] [--json]
       graphrun cancel <job-id>
       graphrun upload <file> [--json]
       graphrun servers list | add <url> | drain <id> | remove <id> [--deployment <id>]
       graphrun deployments [list] | stop <id> | start <id>

serve   runs the workflow execution service over HTTP and WebSocket.
runner  runs jobs only, serving no HTTP, beside "serve --no-run-jobs" instances
        on the same storage. Only one process per database runs jobs.
run, jobs, cancel, upload
        are a client of a running server, over its v2 API: run a workflow file with
        a live progress bar and download its outputs (Ctrl-C cancels the job), list
        your jobs, cancel one, upload a file as an asset. Each takes --url <url>
        (env GRAPHRUN_URL, default http://${DEFAULT_HOST}:${DEFAULT_PORT}) and --token <secret>
        (env GRAPHRUN_TOKEN); "graphrun <command> --help" tells the rest.
servers the engine servers of a running service's pool (the operator's
        /ops/servers): --url and --operator-token (env GRAPHRUN_OPERATOR_TOKEN);
        --deployment <id> for those of one deployment of "serve --deployments".
deployments
        the deployments of a running service and their condition; stop one (its API
        answers 422 deployment_stopped, it starts no job; stored) or start it again.
        Takes --url and --operator-token as servers does.

Storage (serve and runner; by default SQLite and blob files under --data):
  --data <dir>      Directory for the SQLite database and blobs (env GRAPHRUN_DATA,
                    default ${DEFAULT_DATA}); unused when --database and --blobs say elsewhere
  --database <url>  Metadata in PostgreSQL: a postgres:// or postgresql:// URL
                    (env GRAPHRUN_DATABASE_URL; prefer the variable for a password)
  --blobs <place>   Blobs in an S3 bucket, s3://bucket/prefix, or in a directory
                    (env GRAPHRUN_BLOBS_URL). S3 credentials, region and endpoint come
                    from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
                    AWS_REGION, AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL)

Serve only (the runner ignores these variables, so one environment serves both):
  --host <address>  Interface to listen on (env GRAPHRUN_HOST, default ${DEFAULT_HOST})
  --port <number>   Port, 0 for any free one (env GRAPHRUN_PORT, default ${DEFAULT_PORT})
  --token <secret>  Require "Authorization: Bearer <secret>" (env GRAPHRUN_TOKEN;
                    prefer the variable: flags are visible to other local users)
  --operator-token <secret>
                    Require "Authorization: Bearer <secret>" on /metrics and /ops/*
                    (env GRAPHRUN_OPERATOR_TOKEN; prefer the variable); unset, they are
                    open. /healthz and /readyz never need a token
  --no-run-jobs     Serve the API only and run no job: a "graphrun runner" on the same
                    storage runs them (env GRAPHRUN_RUN_JOBS=0 or false; default on)

Engine and generation (serve and runner):
  --allow-private-urls
                    Let outbound requests (LoadImageFromURL, video key frames by URL,
                    video callbacks) reach private, loopback and link-local addresses
                    (env GRAPHRUN_ALLOW_PRIVATE_URLS=1 or true; default off: only for
                    trusted users, it opens the local network to them)
  --worker <url>    Run jobs on an engine server (ComfyUI protocol) instead of in
                    process; repeat for a pool (env GRAPHRUN_WORKERS, comma-separated)
  --warmup <workflow.json>
                    With --worker: an API-format workflow each engine server runs when it
                    joins, before its first job, to load its models (env GRAPHRUN_WARMUP)
  --routing <affinity|least-loaded>
                    With --worker: send a job to a free server holding its models
                    (affinity, the default) or by load alone (env GRAPHRUN_ROUTING)
  --affinity-wait-ms <n>
                    With affinity: how long a job may wait for a busy server holding its
                    models while another is free (env GRAPHRUN_AFFINITY_WAIT_MS, 0 to
                    600000, default 5000)
  --threads <n>     Worker threads the built-in engine computes on, one job each
                    (env GRAPHRUN_THREADS, default one per core)
  --job-lease-seconds <n>
                    How long a runner holds a job without renewing it (every second while
                    it runs); a job whose runner died returns to the queue once that has
                    passed (env GRAPHRUN_JOB_LEASE_SECONDS, 3 to 3600, default 30)
  --music-upstream <url>
                    Forward /proxy/musicgen to this vendor base (env GRAPHRUN_MUSIC_UPSTREAM_URL)
                    with the token in GRAPHRUN_MUSIC_UPSTREAM_TOKEN; default: local synthesis
  --video-upstream <url>
                    Forward /proxy/videogen to this vendor base (env GRAPHRUN_VIDEO_UPSTREAM_URL)
                    with the token in GRAPHRUN_VIDEO_UPSTREAM_TOKEN; default: local rendering
  --webhook <url>[#event,...]
                    POST job events (job.succeeded, job.failed, job.canceled; after a #
                    only those named) to this URL, signed per Standard Webhooks with the
                    secret in GRAPHRUN_WEBHOOK_SECRET (required: whsec_ and the base64 of
                    24 to 64 random bytes); repeat for more endpoints (env GRAPHRUN_WEBHOOKS,
                    comma-separated). Give serve and runner the same ones

Deployments (serve and runner):
  --deployments <file.json>
                    More deployments beside the one the flags above configure ('default'),
                    each with its own engine (its "workers", else the built-in engine on
                    its "threads") and its own storage, derived from the storage flags:
                    <data>/deployments/<id>, PostgreSQL schema deployment_<id>, blobs under
                    deployments/<id>/ (env GRAPHRUN_DEPLOYMENTS). serve reaches each at
                    /deployment/<id>/... and <id>.<base domain>; the rest goes to 'default'.
                    The file: {"baseDomains": [...], "stagingDomains": [...], "pathPrefix":
                    "/deployment" or false, "deployments": [{"id": "sdxl", "staging": false,
                    "workers": ["http://gpu-1:8188"], "threads": 2, "warmup": "w.json",
                    "routing": "affinity", "affinityWaitMs": 5000}]}. Give serve and runner
                    the same file
  -h, --help        Show this help
`;
