import LanSession
import Testing

@Suite("SessionConfiguration.validate")
struct SessionConfigurationTests {
    @Test("a first redial later than the standby paths' longest delay is refused, not a crash when a link drops")
    func redialDelays() throws {
        var configuration = SessionConfiguration(displayName: "a")
        configuration.reconnectInitialDelay = .seconds(60)
        configuration.reconnectMaximumDelay = .seconds(60)
        #expect(throws: SessionError.self) { try configuration.validate() }
        configuration.standbyRedialMaximumDelay = .seconds(60)
        try configuration.validate()
    }
}
