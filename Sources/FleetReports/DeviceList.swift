import DeviceIdentity
import Foundation

/// The answer of `GET /v1/devices` (`clientctl fleet devices`): the devices that signed
/// batches, with where each stands (docs/fleet-reports.md#admission). Bounded: at most
/// ``maxListed`` devices, most recently heard from first, and the count of each status.
public struct DeviceList: Sendable, Equatable, Codable {
    /// The most devices one answer lists.
    public static let maxListed = 1_000

    /// The collector's admission (`open`, `listed` or `manual`).
    public var admission: String
    /// Devices by status (`accepted`, `pending`, `rejected`), all of them.
    public var counts: [String: Int]
    /// The devices listed, most recently heard from first.
    public var devices: [DeviceEntry]
    /// The labels every device listed (and counted in ``counts``) has (`?label=KEY=VALUE`);
    /// nil: every device (and always from a collector before labels).
    public var labels: [String: String]?

    /// A list.
    public init(admission: String, counts: [String: Int], devices: [DeviceEntry], labels: [String: String]? = nil) {
        self.admission = admission
        self.counts = counts
        self.devices = devices
        self.labels = labels
    }
}

/// One device a collector knows by its key.
public struct DeviceEntry: Sendable, Equatable, Codable {
    /// Its id.
    public var device: DeviceID
    /// Its Ed25519 public key (64 hex digits in JSON).
    public var key: DevicePublicKey
    /// `accepted`, `pending` or `rejected`.
    public var status: String
    /// The app and channel of its first batch.
    public var app: String
    public var channel: String
    /// When the collector first and last heard from it.
    public var firstSeen: Date
    public var lastSeen: Date
    /// Its reports held apart (not admitted yet).
    public var held: Int
    /// Its labels as the latest batch it sent carried them, admitted or held (empty: none);
    /// nil from a collector before labels.
    public var labels: [String: String]?

    /// An entry.
    public init(
        device: DeviceID, key: DevicePublicKey, status: String, app: String, channel: String, firstSeen: Date, lastSeen: Date, held: Int,
        labels: [String: String]? = nil
    ) {
        self.device = device
        self.key = key
        self.status = status
        self.app = app
        self.channel = channel
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.held = held
        self.labels = labels
    }
}

/// What an operator's `fleet admit`, `fleet reject` or `fleet forget` changed.
public struct AdmissionChange: Sendable, Equatable, Codable {
    /// Keys or device ids the request named.
    public var named: Int
    /// Devices whose status changed (or, for forget, whose key was forgotten).
    public var devices: Int
    /// Reports moved from held to the fleet's (admit) or deleted (reject, forget).
    public var reports: Int

    /// A change.
    public init(named: Int, devices: Int, reports: Int) {
        self.named = named
        self.devices = devices
        self.reports = reports
    }
}

/// The answer of `GET /v1/guard`: the figures `clientctl rollout guard` judges, for the
/// versions it names only (docs/fleet-reports.md#the-rollout-guard).
///
/// A device counts when it is accepted and either its key was admitted (by an operator or
/// an admit list) or the collector heard from it before `trustedBefore` (the version's first
/// publication: it has a history), whatever the admission mode; only reports received after
/// `since` (a person resumed the rollout) count.
public struct GuardFigures: Sendable, Equatable, Codable {
    /// The most versions one request may name.
    public static let maxVersions = 8
    /// The most other versions listed in ``reported``.
    public static let maxReported = 100

    public var app: String
    public var channel: String
    /// The collector's admission.
    public var admission: String
    /// Whose reports counted: ``admittedOrHistory`` (admitted keys, or devices heard from
    /// before ``trustedBefore``); `history` or `admitted` from an older collector, whose rule
    /// depended on its admission mode.
    public var trust: String
    /// The history a device needs under open admission (nil: none asked).
    public var trustedBefore: Date?
    /// Reports received before this are not counted (nil: all).
    public var since: Date?
    /// The figures of each version named, in the order asked.
    public var versions: [VersionFigures]
    /// Other versions trusted devices reported (the ``maxReported`` latest reported, newest SemVer first).
    public var reported: [String]
    /// Devices left out (neither admitted nor with a history, or pending, rejected, a later
    /// id of a key) that reported on the versions named.
    public var untrustedDevices: Int
    /// The cohort counted: only devices whose latest labels include these (`label=KEY=VALUE`);
    /// nil for every device, and from a collector before labels, which ignores `label`.
    public var labels: [String: String]?

    /// The ``trust`` of a collector that counts admitted devices and devices with a history.
    public static let admittedOrHistory = "admitted-or-history"

    /// Figures.
    public init(
        app: String, channel: String, admission: String, trust: String, trustedBefore: Date?, since: Date?, versions: [VersionFigures],
        reported: [String], untrustedDevices: Int, labels: [String: String]? = nil
    ) {
        self.app = app
        self.channel = channel
        self.admission = admission
        self.trust = trust
        self.trustedBefore = trustedBefore
        self.since = since
        self.versions = versions
        self.reported = reported
        self.untrustedDevices = untrustedDevices
        self.labels = labels
    }
}

/// One version's figures for the guard: distinct devices.
public struct VersionFigures: Sendable, Equatable, Codable {
    public var version: String
    /// Devices that started a trial of it or rolled it back (a rollback whose
    /// `trial-started` was lost is a trial too).
    public var trials: Int
    /// Devices that rolled it back.
    public var failed: Int
    /// Its errors after start, of the same devices (nil from a collector before
    /// `page-errors`; docs/page-errors.md#in-the-fleet).
    public var errors: ErrorFigures?

    /// Figures.
    public init(version: String, trials: Int, failed: Int, errors: ErrorFigures? = nil) {
        self.version = version
        self.trials = trials
        self.failed = failed
        self.errors = errors
    }
}
