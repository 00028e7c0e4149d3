/// One verified answer of one server, with what the query measured: what
/// ``RoughtimeQuorum/decide(answers:failures:quorum:at:reading:)`` decides from. A query
/// (AuthenticatedTimeClient's `RoughtimeClient`, or a caller's own transport) makes it.
public struct RoughtimeAnswer: Sendable, Hashable {
    /// Who answered.
    public var server: RoughtimeServer
    /// The time it proves.
    public var time: RoughtimeTime
    /// From sending the request to receiving the answer, on `ContinuousClock`.
    public var roundTrip: Duration
    /// When the answer arrived, on `ContinuousClock`.
    public var receivedAt: ContinuousClock.Instant
    /// Bytes of the request (UDP payload).
    public var bytesSent: Int
    /// Bytes of the answer (UDP payload).
    public var bytesReceived: Int

    /// An answer (a query makes them; the quorum's tests make them by hand).
    public init(
        server: RoughtimeServer, time: RoughtimeTime, roundTrip: Duration, receivedAt: ContinuousClock.Instant, bytesSent: Int = 0,
        bytesReceived: Int = 0
    ) {
        self.server = server
        self.time = time
        self.roundTrip = roundTrip
        self.receivedAt = receivedAt
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
    }
}
