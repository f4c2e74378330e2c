// `ptxbench serve`: the GPU evaluation service — HTTP API, durable queue, one worker per GPU —
// and `ptxbench worker`, the per-GPU process it starts.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "cli/commands.h"
#include "cli/eval_args.h"
#include "common/error.h"
#include "common/fd.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "definitions/catalog.h"
#include "gpu/gpu_info.h"
#include "service/access_token.h"
#include "service/gpu_eval_backend.h"
#include "service/host_registry.h"
#include "service/instance.h"
#include "service/http_server.h"
#include "service/service_api.h"
#include "service/service_log.h"
#include "service/redis_client.h"
#include "service/task_queue.h"
#include "service/worker_loop.h"
#include "service/worker_pool.h"

namespace ptxbench::cli {
namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

struct ServeArgs {
  std::string listen = "127.0.0.1:8742", db, gpus = "auto";
  std::string queue, redis_password_file, host, arch = "sm_90a";
  int fake_gpus = 0, workers_per_gpu = 1;
  int check_workers = -1;  // -1: a quarter of the cores, 1 to 4, with GPUs of this host; else 0
  double lease = 120, retention_hours = 24 * 7;
  double sanitize_timeout = 0, call_timeout = 0;  // 0: the evaluator's defaults
  std::string sass_tool = "ncu";
  double avoid_window = 60;
  int threads = 64;
  std::string token_file, log_level = "info";
  int64_t max_queued = 1000, client_quota = 100;
};

// --queue / --db → where the queue is. --queue takes a SQLite path too; the two are exclusive.
QueueConfig queue_config_from(const std::string& queue, const std::string& db, const std::string& password_file,
                              const std::string& host, const std::string& arch, double lease) {
  if (!queue.empty() && !db.empty()) throw InputError("queue", "give --queue or --db, not both");
  QueueConfig c;
  c.location = !queue.empty() ? queue : !db.empty() ? db : (cache_root() / "service.db").string();
  c.password_file = password_file;
  c.host = host.empty() ? local_host_name() : host;
  c.arch = arch;
  c.gone_after_s = lease;
  if (!c.redis() && !password_file.empty()) throw InputError("queue", "--redis-password-file needs --queue redis://…");
  if (c.redis() && parse_redis_url(c.location).password.empty() == false)
    spdlog::warn("the queue URL holds a password: it shows in process lists; use --redis-password-file");
  return c;
}

void add_queue_options(CLI::App* cmd, std::string& queue, std::string& password_file, std::string& host, std::string& arch) {
  cmd->add_option("--queue", queue,
                  "where the queue is: a SQLite file, or redis://[USER@]HOST:PORT[/DB][?prefix=NAME] to share it with other hosts "
                  "(docs/service.md, \"Many hosts\")");
  cmd->add_option("--redis-password-file", password_file, "file holding the Redis ACL user's password (one line)");
  cmd->add_option("--host", host, "this host's name in claims, health and verdicts (default: the system's host name)");
  cmd->add_option("--arch", arch, "GPU kind whose task stream this process serves (one consumer group per arch)")->capture_default_str();
}

// The workers this service starts: one process per GPU and slot, with the evaluator options the
// service was given, a fair share of the host's cores each, and the re-run policy across GPUs.
WorkerPoolConfig worker_pool_config(const ServeArgs& a, const QueueConfig& queue_config, const std::string& db) {
  WorkerPoolConfig pool_config;
  pool_config.self_exe = (executable_dir() / "ptxbench").string();
  pool_config.db = db;
  pool_config.queue = queue_config;
  pool_config.lease_s = a.lease;
  pool_config.workers_per_gpu = a.workers_per_gpu;
  // By default only beside real GPU workers: a check worker compiles with this host's toolchain,
  // which must be the GPU workers' (a front door's --gpus 0 may have another, or none).
  pool_config.check_workers = a.check_workers >= 0 ? a.check_workers
                              : a.fake_gpus > 0 || a.gpus == "0" ? 0
                                                  : static_cast<int>(std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u));
  // Workers sharing a GPU share its memory budget for cached workload states.
  pool_config.worker_args.insert(pool_config.worker_args.end(),
                                 {"--state-budget-fraction", std::to_string(0.5 / std::max(1, a.workers_per_gpu))});
  if (a.sanitize_timeout > 0) pool_config.worker_args.insert(pool_config.worker_args.end(), {"--sanitize-timeout", std::to_string(a.sanitize_timeout)});
  if (a.call_timeout > 0) pool_config.worker_args.insert(pool_config.worker_args.end(), {"--call-timeout", std::to_string(a.call_timeout)});
  pool_config.worker_args.insert(pool_config.worker_args.end(), {"--sass-tool", a.sass_tool});
  pool_config.worker_args.insert(pool_config.worker_args.end(), {"--log-level", a.log_level});
  if (a.fake_gpus > 0) {
    pool_config.fake = true;
    for (int d = 0; d < a.fake_gpus; ++d) pool_config.devices.push_back(d);
  } else {
    int n = a.gpus == "auto" ? cuda_device_count() : std::stoi(a.gpus);
    // With Redis, a service may be only the front door (--gpus 0): workers on other hosts run the tasks.
    if (n <= 0 && !(queue_config.redis() && a.gpus == "0"))
      throw EnvironmentError("serve", "no CUDA device found (use --fake-gpus N to run without a GPU, or with --queue redis://… "
                                      "--gpus 0 to serve without workers of this host)");
    for (int d = 0; d < n; ++d) pool_config.devices.push_back(d);
  }
  // The host's cores shared out among all workers for output comparisons.
  {
    unsigned workers = static_cast<unsigned>(pool_config.devices.size() * std::max(1, a.workers_per_gpu));
    unsigned share = std::max(1u, std::thread::hardware_concurrency() / std::max(1u, workers));
    pool_config.worker_args.insert(pool_config.worker_args.end(), {"--compare-threads", std::to_string(std::min(16u, share))});
  }
  // With several GPUs, a task whose evaluation failed on one (its worker died, an infrastructure
  // error) is re-run on another first.
  if (pool_config.devices.size() > 1 || queue_config.redis())
    pool_config.worker_args.insert(pool_config.worker_args.end(), {"--avoid-window", std::to_string(a.avoid_window)});
  return pool_config;
}

int serve(const ServeArgs& a) {
  init_service_log("serve", a.log_level);
  // Exposure first: nothing starts when the address would let other hosts in without a token.
  auto [host, port] = parse_listen_address(a.listen);
  std::optional<std::string> token = load_access_token(a.token_file);
  require_token_for_listen(host, token);
  Catalog catalog = Catalog::load(data_root());
  QueueConfig queue_config = queue_config_from(a.queue, a.db, a.redis_password_file, a.host, a.arch, a.lease);
  // The local state of this service: the SQLite queue, or with Redis a file of this host's
  // service that the instance lock, scratch folders and GPU locks go beside.
  std::string db = queue_config.redis() ? (cache_root() / ("service-" + sha256_hex(queue_config.describe()).substr(0, 12) + ".local")).string()
                                        : queue_config.location;
  if (fs::path(db).has_parent_path()) fs::create_directories(fs::path(db).parent_path());
  WorkerPoolConfig pool_config = worker_pool_config(a, queue_config, db);
  // The workers write their log lines to our stderr (a descriptor of their own, fd 3: their
  // stderr is captured for the exit report).
  Fd log_fd(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3));
  if (log_fd.valid()) pool_config.log_fd = log_fd.get();

  // One service per queue. Runners and tools a killed predecessor left running (a hung candidate
  // still on a GPU) go before any worker starts; the evaluations' scratch folders are its own.
  InstanceLock instance(db);
  fs::path scratch = service_scratch_root(db);
  Leftovers left = clear_leftovers(scratch);
  if (left.processes_killed > 0)
    spdlog::warn("killed {} process{} left running by a previous instance of this service", left.processes_killed,
                 left.processes_killed == 1 ? "" : "es");
  pool_config.worker_args.insert(pool_config.worker_args.end(), {"--scratch-root", scratch.string()});

  std::unique_ptr<TaskQueue> queue_owner = open_task_queue(queue_config);
  TaskQueue& queue = *queue_owner;
  int64_t recovered = queue.recover_all_running("service restarted; re-run");
  if (recovered > 0) spdlog::warn("{} task{} running when the service stopped re-queued", recovered, recovered == 1 ? "" : "s");
  open_host_registry(queue_config)->clear_health();  // records of GPUs this start does not use must not steer re-runs
  WorkerPool pool(pool_config);
  ServiceApiOptions api_options;
  api_options.admission = {a.max_queued, a.client_quota};
  api_options.token = token;
  api_options.entry_lane = pool_config.check_workers > 0 ? TaskLane::check : TaskLane::gpu;
  ServiceApi api(catalog, queue_config, api_options, [&pool] { return pool.status(); });
  HttpServerOptions http;
  http.host = host;
  http.port = port;
  http.threads = a.threads;
  HttpServer server(http, [&api](const HttpRequest& r) { return api.handle(r); });
  install_stop_handlers();
  pool.start();
  server.start();
  std::size_t workers = pool_config.devices.size() * static_cast<std::size_t>(std::max(1, a.workers_per_gpu));
  fmt::print("ptxbench service listening on http://{} ({} GPU{}, {} {}worker{}, {} check worker{}, queue {}, {} task{} recovered)\n",
             server.address(), pool_config.devices.size(), pool_config.devices.size() == 1 ? "" : "s", workers,
             pool_config.fake ? "fake " : "", workers == 1 ? "" : "s", pool_config.check_workers,
             pool_config.check_workers == 1 ? "" : "s", queue_config.describe(), recovered, recovered == 1 ? "" : "s");
  std::fflush(stdout);
  spdlog::info("listening on http://{}{}; queue bound {}, client quota {} (0: none)", server.address(),
               token ? " (access token required)" : "", a.max_queued, a.client_quota);
  auto last_expiry = std::chrono::steady_clock::now() - std::chrono::hours(1);
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    pool.supervise();
    try {
      if (int64_t lost = queue.recover_expired(); lost > 0)
        spdlog::warn("{} task{} whose worker stopped renewing its lease re-queued", lost, lost == 1 ? "" : "s");
      if (std::chrono::steady_clock::now() - last_expiry > std::chrono::minutes(10)) {
        if (int64_t expired = queue.expire_finished(a.retention_hours * 3600); expired > 0)
          spdlog::info("{} finished task{} older than {} h expired", expired, expired == 1 ? "" : "s", a.retention_hours);
        last_expiry = std::chrono::steady_clock::now();
      }
    } catch (const RedisConnectionError& e) {  // Redis restarting: the next round reconnects
      spdlog::warn("queue maintenance skipped: {}", e.what());
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  spdlog::info("stopping");
  api.shutting_down();
  server.stop();
  pool.stop();
  return 0;
}

struct WorkerArgs {
  std::string db, name, gpu_lock, scratch_root;
  std::string queue, redis_password_file, host, arch = "sm_90a";
  double sanitize_timeout = 0, call_timeout = 0;  // 0: the evaluator's defaults
  double state_budget_fraction = EvalOptions{}.state_budget_fraction, avoid_window = -1;  // -1: 60 s with Redis, else 0
  std::string sass_tool = "ncu";
  unsigned compare_threads = 0;
  int device = 0;
  std::string lane = "gpu";
  double lease = 120;
  int64_t max_attempts = 3;
  bool fake = false;
  std::string log_level = "info";
  int log_fd = STDERR_FILENO;
};

int worker(const WorkerArgs& a) {
  if (a.queue.empty() && a.db.empty()) throw InputError("worker", "give the queue: --db FILE (SQLite) or --queue redis://HOST:PORT");
  if (::fcntl(a.log_fd, F_GETFD) < 0) throw InputError("worker", "--log-fd " + std::to_string(a.log_fd) + " is not an open descriptor");
  const bool check = a.lane == "check";
  init_service_log(!a.name.empty() ? a.name : check ? "check0" : "gpu" + std::to_string(a.device), a.log_level, a.log_fd);
  install_stop_handlers();
  Catalog catalog = Catalog::load(data_root());
  std::unique_ptr<EvalBackend> backend;
  if (a.fake) {
    backend = std::make_unique<FakeEvalBackend>(check ? -1 : a.device, a.gpu_lock);
  } else {
    EvalOptions base;
    base.device = a.device;
    base.gpu_lock = a.gpu_lock;
    if (!a.scratch_root.empty()) base.scratch_root = a.scratch_root;
    if (a.sanitize_timeout > 0) base.sanitize_timeout_s = a.sanitize_timeout;
    if (a.call_timeout > 0) base.call_timeout_s = a.call_timeout;
    base.state_budget_fraction = a.state_budget_fraction;
    base.sass_tool = parse_sass_tool(a.sass_tool);
    base.compare_threads = a.compare_threads;
    backend = make_gpu_backend(catalog, base);
  }
  WorkerConfig config;
  config.queue = queue_config_from(a.queue, a.db, a.redis_password_file, a.host, a.arch, a.lease);
  config.queue.max_attempts = a.max_attempts;
  config.name = !a.name.empty() ? a.name : check ? "check0" : "gpu" + std::to_string(a.device);
  config.device = check ? -1 : a.device;
  config.lease_s = a.lease;
  config.max_attempts = a.max_attempts;
  // Across hosts a task that failed on this one goes to another first (Redis); on one host serve
  // passes its window when it has several GPUs.
  config.avoid_window_s = a.avoid_window >= 0 ? a.avoid_window : config.queue.redis() ? 60 : 0;
  return check ? run_check_worker(config, *backend, catalog, g_stop) : run_worker(config, *backend, catalog, g_stop);
}

}  // namespace

void register_serve(CLI::App& app, Action& action) {
  static ServeArgs s;
  auto* serve_cmd = app.add_subcommand("serve", "run the GPU evaluation service (HTTP API, durable queue, one worker per GPU)");
  serve_cmd->add_option("--listen", s.listen, "HOST:PORT to listen on (an address other hosts can reach needs --token-file or $PTXBENCH_TOKEN)")
      ->capture_default_str();
  serve_cmd->add_option("--db", s.db, "queue database (default: the cache folder's service.db)");
  add_queue_options(serve_cmd, s.queue, s.redis_password_file, s.host, s.arch);
  serve_cmd->add_option("--gpus", s.gpus, "number of GPUs to use, or auto")->capture_default_str();
  serve_cmd->add_option("--fake-gpus", s.fake_gpus, "run N fake workers that need no GPU (tests)")->capture_default_str();
  serve_cmd->add_option("--lease", s.lease, "seconds a claimed task may go without a worker heartbeat")->capture_default_str();
  serve_cmd->add_option("--retention-hours", s.retention_hours, "finished tasks are kept this long")->capture_default_str();
  serve_cmd->add_option("--threads", s.threads, "HTTP handler threads (long-polls hold one each)")->capture_default_str();
  serve_cmd->add_option("--workers-per-gpu", s.workers_per_gpu, "worker processes per GPU: untimed stages overlap, timing runs alone")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  serve_cmd->add_option("--check-workers", s.check_workers,
                        "CPU workers that run each new task's compile stage first, so that its COMPILE_ERROR, BANNED_API or "
                        "ABI_ERROR never waits for a GPU worker (default: a quarter of the cores, 1 to 4; 0 with --fake-gpus or --gpus 0)")
      ->check(CLI::Range(0, 64));
  add_timeout_options(serve_cmd, s.sanitize_timeout, s.call_timeout);
  serve_cmd->add_option("--avoid-window", s.avoid_window, "with several GPUs: seconds a task that failed on one GPU is left to the others")
      ->capture_default_str();
  serve_cmd->add_option("--sass-tool", s.sass_tool, "runtime SASS counts through ncu or cupti (experimental)")
      ->check(CLI::IsMember({"cupti", "ncu"}))
      ->capture_default_str();
  serve_cmd->add_option("--token-file", s.token_file,
                        "access token clients must send (Authorization: Bearer); file of mode 600. Default $PTXBENCH_TOKEN; "
                        "required to listen on a non-loopback address");
  serve_cmd->add_option("--max-queued", s.max_queued, "queued tasks in all; beyond, submissions get 503 (0: no bound)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  serve_cmd->add_option("--client-quota", s.client_quota, "queued + running tasks per client; beyond, submissions get 429 (0: no quota)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  serve_cmd->add_option("--log-level", s.log_level, "log of serve and its workers on stderr: trace, debug, info, warn, error, critical, off")
      ->check(CLI::IsMember(log_level_names()))
      ->capture_default_str();
  serve_cmd->callback([&action] { action = [] { return serve(s); }; });

  static WorkerArgs w;
  auto* worker_cmd = app.add_subcommand("worker", "one GPU's worker process (started by serve; or on its own, on any host, with --queue redis://…)");
  worker_cmd->add_option("--db", w.db, "queue database (SQLite; or --queue)");
  add_queue_options(worker_cmd, w.queue, w.redis_password_file, w.host, w.arch);
  worker_cmd->add_option("--device", w.device, "CUDA device index")->capture_default_str();
  worker_cmd->add_option("--lane", w.lane, "gpu: whole evaluations; check: compile stages only, on the CPU (a check worker)")
      ->check(CLI::IsMember({"check", "gpu"}))
      ->capture_default_str();
  worker_cmd->add_option("--name", w.name, "worker name (claim owner; default gpuN)");
  worker_cmd->add_option("--lease", w.lease, "claim lease seconds")->capture_default_str();
  worker_cmd->add_option("--max-attempts", w.max_attempts, "tries before a task is given up as INFRA_ERROR")->capture_default_str();
  worker_cmd->add_flag("--fake", w.fake, "evaluate with the fake backend (no GPU)");
  worker_cmd->add_option("--gpu-lock", w.gpu_lock, "lock file shared with the other workers of this GPU");
  worker_cmd->add_option("--scratch-root", w.scratch_root, "folder for the evaluations' scratch folders");
  add_timeout_options(worker_cmd, w.sanitize_timeout, w.call_timeout);
  worker_cmd->add_option("--compare-threads", w.compare_threads, "host threads per output comparison (0: one per core, at most 16)")
      ->capture_default_str();
  worker_cmd->add_option("--avoid-window", w.avoid_window,
                         "seconds a task that failed on this GPU (host, with Redis) is left to others (default: 60 with Redis, else 0)");
  worker_cmd->add_option("--sass-tool", w.sass_tool, "runtime SASS counts through ncu or cupti (experimental)")
      ->check(CLI::IsMember({"cupti", "ncu"}))
      ->capture_default_str();
  worker_cmd->add_option("--state-budget-fraction", w.state_budget_fraction,
                         "share of the GPU's memory that cached workload states may hold")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  worker_cmd->add_option("--log-level", w.log_level, "trace, debug, info, warn, error, critical, off")
      ->check(CLI::IsMember(log_level_names()))
      ->capture_default_str();
  worker_cmd->add_option("--log-fd", w.log_fd, "descriptor to write the log to (serve passes its stderr as 3)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  worker_cmd->callback([&action] { action = [] { return worker(w); }; });
}

}  // namespace ptxbench::cli
