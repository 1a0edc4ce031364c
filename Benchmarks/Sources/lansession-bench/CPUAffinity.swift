#if canImport(Glibc)
    import Glibc
#endif

/// The CPUs a thread may run on (sched_setaffinity), for measurements pinned as `taskset -c` pins a program.
enum CPUAffinity {
    /// `sched_getaffinity` and `sched_setaffinity` share this shape; Glibc declares them only for _GNU_SOURCE, so
    /// they are looked up by name.
    private typealias Call = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32

    private static func call(_ name: String) -> Call? {
        dlsym(nil, name).map { unsafeBitCast($0, to: Call.self) }
    }

    /// Runs `body` with the calling thread on `cpu` only, then puts its previous CPUs back. `body` must not suspend
    /// (it would resume on another thread).
    static func onCPU<Result>(_ cpu: Int, _ body: () throws -> Result) rethrows -> Result {
        guard let get = call("sched_getaffinity"), let set = call("sched_setaffinity") else { return try body() }
        var previous = cpu_set_t()
        let saved = withUnsafeMutableBytes(of: &previous) { get(0, $0.count, $0.baseAddress!) } == 0
        var wanted = cpu_set_t()
        withUnsafeMutableBytes(of: &wanted) { bytes in
            bytes[cpu / 8] |= UInt8(1 << (cpu % 8))
            _ = set(0, bytes.count, bytes.baseAddress!)
        }
        defer {
            if saved { _ = withUnsafeMutableBytes(of: &previous) { set(0, $0.count, $0.baseAddress!) } }
        }
        return try body()
    }
}
