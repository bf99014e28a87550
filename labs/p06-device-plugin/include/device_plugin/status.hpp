// DeviceError codes <-> gRPC status codes, kept in one place. Include only
// from files that already include gRPC.
#pragma once

#include <grpcpp/support/status.h>

#include <string_view>

#include "device_plugin/device_state.hpp"

namespace device_plugin {

inline grpc::StatusCode to_grpc_code(ErrorCode c) {
  switch (c) {
    case ErrorCode::kInvalidArgument: return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::kNotFound: return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::kAlreadyExists: return grpc::StatusCode::ALREADY_EXISTS;
    case ErrorCode::kFailedPrecondition: return grpc::StatusCode::FAILED_PRECONDITION;
  }
  return grpc::StatusCode::UNKNOWN;
}

std::string_view status_name(grpc::StatusCode c);

}  // namespace device_plugin
