/// What `iperf3 -J` reports that `push` reads: the end's sums and both ends' CPU.
struct IPerfReport: Decodable {
    struct End: Decodable {
        var sum_sent: Sum
        var sum_received: Sum
        var cpu_utilization_percent: CPU
    }

    struct Sum: Decodable {
        var seconds: Double
        var bytes: Double
        var bits_per_second: Double
    }

    struct CPU: Decodable {
        var host_total: Double
        var remote_total: Double
    }

    var end: End
}
