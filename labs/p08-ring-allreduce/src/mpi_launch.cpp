#include "ring_allreduce/mpi_launch.hpp"

#include <fmt/core.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#ifdef RING_HAVE_MPI
#include <mpi.h>
#endif

namespace ring {

bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

#ifdef RING_HAVE_MPI

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(fmt::format("{} failed (MPI error {})", what, rc));
}

// A fixed-size record, so one MPI_Allgather of bytes swaps every endpoint.
struct WireEndpoint {
  char address[64];
  std::uint16_t port;
};

}  // namespace

bool mpi_built() { return true; }

MpiSession::MpiSession(int& argc, char**& argv) {
  check(MPI_Init(&argc, &argv), "MPI_Init");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &world_), "MPI_Comm_size");
}

MpiSession::~MpiSession() { MPI_Finalize(); }

std::string MpiSession::library() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(len));
  const auto cut = s.find_first_of(",\n");
  return cut == std::string::npos ? s : s.substr(0, cut);
}

std::vector<RankOutcome> launch_mpi(const MpiSession& mpi, const std::string& listen_addr,
                                    std::chrono::milliseconds timeout, const TransportOptions& transport,
                                    const RankJob& job) {
  Listener listener = listen_tcp(listen_addr, mpi.world());
  WireEndpoint mine{};
  std::snprintf(mine.address, sizeof mine.address, "%s", listener.address.c_str());
  mine.port = listener.port;
  std::vector<WireEndpoint> all(static_cast<std::size_t>(mpi.world()));
  check(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD),
        "MPI_Allgather of endpoints");
  std::vector<Endpoint> endpoints;
  for (const auto& e : all) endpoints.push_back({e.address, e.port});

  gpulab::Json report;
  try {
    Transport t = connect_mesh(mpi.rank(), endpoints, std::move(listener.fd), timeout,
                               Clock::now() + std::chrono::seconds(30), transport);
    report = run_rank_job(t, job);
    // Keep the mesh open until every rank is done (see launch_local).
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  } catch (const std::exception& e) {
    report = gpulab::Json{{"error", e.what()}};
  }

  // Gather every rank's JSON report on rank 0.
  const std::string text = report.dump();
  int len = static_cast<int>(text.size());
  std::vector<int> lens(static_cast<std::size_t>(mpi.world()));
  check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<int> offsets(lens.size());
  int total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    offsets[i] = total;
    total += lens[i];
  }
  std::string all_text(mpi.rank() == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  check(MPI_Gatherv(text.data(), len, MPI_CHAR, all_text.data(), lens.data(), offsets.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<RankOutcome> out;
  if (mpi.rank() != 0) return out;
  for (std::size_t r = 0; r < lens.size(); ++r) {
    RankOutcome o;
    o.rank = static_cast<int>(r);
    const auto rep = gpulab::Json::parse(all_text.substr(static_cast<std::size_t>(offsets[r]),
                                                         static_cast<std::size_t>(lens[r])));
    if (rep.contains("error")) {
      o.status = RankOutcome::Status::kFailed;
      o.error = rep["error"].get<std::string>();
    } else {
      o.status = RankOutcome::Status::kOk;
      o.report = rep;
    }
    out.push_back(std::move(o));
  }
  return out;
}

void mpi_allreduce_inplace(std::span<double> data) {
  check(MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
}

void mpi_allreduce_inplace(std::span<float> data) {
  check(MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
}

#else  // built without MPI

bool mpi_built() { return false; }
MpiSession::MpiSession(int&, char**&) {}
MpiSession::~MpiSession() = default;
std::string MpiSession::library() const { return "none"; }

std::vector<RankOutcome> launch_mpi(const MpiSession&, const std::string&, std::chrono::milliseconds,
                                    const TransportOptions&, const RankJob&) {
  throw std::runtime_error("this ring-allreduce was built without MPI");
}
void mpi_allreduce_inplace(std::span<double>) { throw std::runtime_error("this ring-allreduce was built without MPI"); }
void mpi_allreduce_inplace(std::span<float>) { throw std::runtime_error("this ring-allreduce was built without MPI"); }

#endif

}  // namespace ring
