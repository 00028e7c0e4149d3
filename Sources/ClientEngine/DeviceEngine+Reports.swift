import ClientUpdater
import DeviceSetup
import Foundation

extension DeviceEngine {
    /// How long `install` and `ack` spend delivering pending reports before they exit
    /// (seconds); what is left stays for the next run.
    package static let exitFlush: Duration = .seconds(3)

    /// The sender of this root's fleet reports (docs/fleet-reports.md#delivery), on the
    /// engine's transport (``transport``: the host's, else the root's `proxy` and `caFile`);
    /// nil when the config names no report URL (``ReportDelivery/reportURL(config:)``, the
    /// rule the journal follows too): then nothing is recorded or sent. Without `options`
    /// the sender's bounds are the defaults and its clocks the engine's (``now``,
    /// ``monotonic``).
    package func reportSender(options: ReportSender.Options? = nil) -> ReportSender? {
        guard let url = ReportDelivery.reportURL(config: config),
            let device = try? DeviceIdFile.readOrCreate(layout)
        else { return nil }
        let identity = ReportIdentity(device: device, app: config.app, channel: Self.reportChannel(config))
        // A root made before device keys gets one now; one whose key is unusable (a
        // damaged file, a mode others may read) sends unsigned batches, which a collector
        // under open admission takes while the id is bound to no key.
        let signer = try? DeviceKey.readOrCreate(layout)
        return ReportSender(
            source: ReportJournal(layout: layout, now: now), identity: identity, url: url,
            transport: transport, options: options ?? reportOptions,
            refusalFile: layout.root + "/" + ReportSender.refusalFileName, signer: signer)
    }

    /// The report sender's default options on the engine's clocks.
    private var reportOptions: ReportSender.Options {
        var options = ReportSender.Options()
        options.now = now
        options.clock = monotonic
        if let reportRandom { options.random = reportRandom }
        return options
    }

    /// Delivers the pending reports within ``exitFlush`` (`install`, `ack`); does
    /// nothing without a report URL. Never throws: what is not delivered stays pending.
    package func deliverReportsBeforeExit(within limit: Duration = exitFlush) async {
        guard let sender = reportSender() else { return }
        await sender.flush(within: limit)
    }

    /// The channel named in a batch: the archive channel's `channel`, else the root's
    /// channel kind (a Meteor root follows one server, not a named channel).
    static func reportChannel(_ config: DeviceConfig) -> String {
        if case .string(let name) = config.channelSettings.values["channel"], !name.isEmpty { return name }
        return config.channelKind.rawValue
    }
}
