/// What a device knows of the link its downloads take now: metered (a cellular uplink, a
/// hotspot) or not, and who said so. The download policy reads it before each download
/// (docs/download-policy.md).
package struct LinkReading: Sendable, Equatable {
    /// True when the link is metered.
    package var metered: Bool
    /// Who said so, for `status --explain`: `NetworkManager: Metered=yes (guessed)`,
    /// `settings: wwan0 is named metered`, `no probe: not metered`.
    package var source: String

    package init(metered: Bool, source: String) {
        self.metered = metered
        self.source = source
    }

    /// What a device without a probe assumes: not metered.
    package static let unknown = LinkReading(metered: false, source: "no probe: not metered")
}

/// The seam that reads whether the link is metered: NetworkManager's `Metered` property, a
/// settings override naming metered interfaces, or a test's answer. It never throws: a probe
/// that cannot tell answers with what it assumes and says so in ``LinkReading/source``.
package protocol MeteredLinkProbe: Sendable {
    /// The link as it is now; bounded in time (a probe that hangs answers with its assumption).
    func read() async -> LinkReading
}

/// A probe with a fixed answer: a device with no probe (``LinkReading/unknown``), or a test.
package struct FixedLinkProbe: MeteredLinkProbe {
    package let reading: LinkReading
    package init(_ reading: LinkReading = .unknown) { self.reading = reading }
    package func read() async -> LinkReading { reading }
}
