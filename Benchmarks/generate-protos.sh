#!/usr/bin/env bash
# Regenerates Sources/CodecBenchmark/Generated/bench.pb.swift from Protos/bench.proto.
#
# Usage: PROTOC_GEN_SWIFT=/path/to/protoc-gen-swift Benchmarks/generate-protos.sh
# Needs `protoc` on PATH and a protoc-gen-swift built from the swift-protobuf version that Package.swift depends on.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ -z "${PROTOC_GEN_SWIFT:-}" ]]; then
    echo "generate-protos.sh: set PROTOC_GEN_SWIFT to the path of protoc-gen-swift" >&2
    exit 2
fi
if [[ ! -x "$PROTOC_GEN_SWIFT" ]]; then
    echo "generate-protos.sh: $PROTOC_GEN_SWIFT is not an executable" >&2
    exit 2
fi
command -v protoc >/dev/null || { echo "generate-protos.sh: protoc not found on PATH" >&2; exit 2; }

cd "$here"
protoc \
    --plugin=protoc-gen-swift="$PROTOC_GEN_SWIFT" \
    --proto_path=Protos \
    --swift_opt=Visibility=Internal \
    --swift_out=Sources/CodecBenchmark/Generated \
    Protos/bench.proto
echo "generated Sources/CodecBenchmark/Generated/bench.pb.swift" >&2
