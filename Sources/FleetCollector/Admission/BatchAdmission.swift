import DeviceIdentity
import FleetReports
import Foundation

/// A statement of the shared SQL and its arguments.
public struct SQLStatement: Sendable, Equatable {
    /// The SQL text (`?` placeholders).
    public var sql: String
    /// The arguments, in order.
    public var arguments: [SQLValue]

    /// A statement.
    public init(_ sql: String, _ arguments: [SQLValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }
}

/// The admission of one batch (docs/fleet-reports.md#admission), the same for every store:
/// what to read in the batch's transaction, what the rows read decide, and what to write.
/// A store runs ``reads``, passes their rows to ``decide(_:_:)``, writes the reports into
/// the table decided (each insert telling which seqs were stored), then ``after(_:stored:)``.
struct BatchAdmission {
    /// The most reports held for one device that is not admitted: past it its batches get 429.
    static let maxHeldPerDevice: Int64 = 10_000

    let batch: ReportBatch
    let mode: AdmissionMode
    let received: Date

    /// What the rows read decided.
    struct Decision: Equatable {
        var verdict: AdmissionVerdict
        /// Where the reports go (`reports` or `held_reports`); nil when refused.
        var table: String?
        /// Statements before the reports (binding a new device's key, promoting a listed one).
        var before: [SQLStatement]
    }

    /// The device's bound key, its status, reports held and app; whether its key is listed;
    /// whether an operator rejected its key; and another device its key already speaks for.
    /// An unsigned batch names no key: only the first is read (a bound key refuses it).
    var reads: [SQLStatement] {
        let device = SQLValue.text(batch.device.text)
        let bound = SQLStatement("SELECT key, status, held, app FROM device_keys WHERE device = ?", [device])
        guard let signer = batch.key else { return [bound] }
        let key = SQLValue.text(signer.hex)
        return [
            bound,
            SQLStatement("SELECT COUNT(*) FROM admitted_keys WHERE key = ?", [key]),
            SQLStatement("SELECT COUNT(*) FROM rejected_keys WHERE key = ?", [key]),
            SQLStatement(
                "SELECT device FROM device_keys WHERE key = ? AND device <> ? ORDER BY first_ms, device LIMIT 1", [key, device]),
        ]
    }

    /// Decides from the rows of ``reads``, in their order.
    func decide(_ rows: [[[SQLValue]]]) -> Decision {
        func first(_ i: Int) -> [SQLValue]? { i < rows.count ? rows[i].first : nil }
        let row = first(0)
        let boundKey = row?.first?.text
        let status = (row?.count ?? 0) > 1 ? row?[1].text.flatMap(DeviceStatus.init(rawValue:)) : nil
        let held = (row?.count ?? 0) > 2 ? row?[2].integer ?? 0 : 0
        let boundApp = (row?.count ?? 0) > 3 ? row?[3].text : nil
        let isListed = (first(1)?.first?.integer ?? 0) > 0
        let isRejected = (first(2)?.first?.integer ?? 0) > 0
        let otherDevice = first(3)?.first?.text
        let now = ReportSQL.millis(received)
        guard let key = batch.key else {
            if boundKey != nil {
                return refuse(.unsignedBound, "device \(batch.device) is bound to a key: unsigned batches for it are refused")
            }
            guard mode == .open else {
                return refuse(.unsigned, "unsigned batch: this collector admits \(mode.rawValue) devices only, each with its key")
            }
            return Decision(verdict: .accepted, table: "reports", before: [])
        }
        if let boundKey {
            guard boundKey == key.hex else {
                return refuse(.keyMismatch, "device \(batch.device) is bound to another key: this batch's key is refused")
            }
            if status == .rejected || isRejected {
                return refuse(.rejected, "device \(batch.device) was rejected by the collector's operator")
            }
            // A device's key speaks for the app it was bound with: a kiosk of one app has no
            // say in another app's fleet (its summary, its guard).
            if let boundApp, boundApp != batch.app {
                return refuse(.appMismatch, "device \(batch.device) is bound to app \(boundApp): its key speaks for that app alone")
            }
            switch status {
            case .accepted?:
                return Decision(verdict: .accepted, table: "reports", before: [])
            default:
                if isListed {
                    return Decision(verdict: .accepted, table: "reports", before: Self.admit(key: key, now: now, lifting: false))
                }
                guard held < Self.maxHeldPerDevice else {
                    return refuse(.heldFull, "device \(batch.device) is not admitted and has \(held) reports held, the most kept")
                }
                return Decision(verdict: .held, table: "held_reports", before: [])
            }
        }
        if isRejected {
            return refuse(.rejected, "key \(key) was rejected by the collector's operator")
        }
        if let otherDevice {
            return refuse(.keyBound, Self.keyBoundMessage(key: key, device: otherDevice))
        }
        let admitted = mode == .open || isListed
        // No conflict target: a key bound to another id at the same moment (another
        // collector on the same database) trips the one-device-per-key index and inserts
        // nothing, which ``confirmed(_:)`` then refuses.
        let bind = SQLStatement(
            """
            INSERT INTO device_keys (device, key, status, app, channel, first_ms, last_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """,
            [
                .text(batch.device.text), .text(key.hex), .text((admitted ? DeviceStatus.accepted : .pending).rawValue), .text(batch.app),
                .text(batch.channel), .integer(now), .integer(now),
            ])
        return Decision(verdict: admitted ? .accepted : .held, table: admitted ? "reports" : "held_reports", before: [bind])
    }

    /// The refusal of a key that already speaks for another device id.
    static func keyBoundMessage(key: DevicePublicKey, device: String?) -> String {
        guard let device else { return "key \(key) already speaks for another device: one key, one device" }
        return "key \(key) already speaks for device \(device): one key, one device (`clientctl fleet forget \(device)` frees it)"
    }

    /// Read after ``Decision/before`` in the same transaction: the key bound now. Another
    /// collector may have bound the id to another key between the read and the bind. Nil for
    /// an unsigned batch, which binds nothing (``confirmed(_:)`` has nothing to check).
    var confirm: SQLStatement? {
        guard batch.key != nil else { return nil }
        return SQLStatement("SELECT key FROM device_keys WHERE device = ?", [.text(batch.device.text)])
    }

    /// The refusal when the confirmed key is not the batch's, or when none is bound (the
    /// bind found the key taken by another id at the same moment).
    func confirmed(_ rows: [[SQLValue]]) -> AdmissionRefusal? {
        guard let key = batch.key else { return nil }
        guard let bound = rows.first?.first?.text else {
            return AdmissionRefusal(.keyBound, Self.keyBoundMessage(key: key, device: nil))
        }
        guard bound != key.hex else { return nil }
        return AdmissionRefusal(.keyMismatch, "device \(batch.device) is bound to another key: this batch's key is refused")
    }

    /// Statements after the reports went into `table`: the device's row (admitted) or its
    /// held count, and its key's last sight; when a report was stored now, the device's
    /// labels become the batch's (a batch that stored nothing, a replay, changes none).
    func after(_ table: String, stored: Set<Int64>) -> [SQLStatement] {
        var out: [SQLStatement] = []
        let now = ReportSQL.millis(received)
        if !stored.isEmpty {
            out.append(SQLStatement(ReportSQL.upsertLabels, ReportSQL.labelArguments(batch, received: received)))
        }
        if table == "reports" {
            if let device = ReportSQL.deviceArguments(batch, stored: stored, received: received) {
                out.append(SQLStatement(ReportSQL.upsertDevice, device))
            }
            if batch.key != nil {
                out.append(SQLStatement("UPDATE device_keys SET last_ms = ? WHERE device = ?", [.integer(now), .text(batch.device.text)]))
            }
        } else {
            out.append(
                SQLStatement(
                    "UPDATE device_keys SET last_ms = ?, held = held + ? WHERE device = ?",
                    [.integer(now), .integer(Int64(stored.count)), .text(batch.device.text)]))
        }
        return out
    }

    private func refuse(_ reason: AdmissionRefusal.Reason, _ message: String) -> Decision {
        Decision(verdict: .refused(AdmissionRefusal(reason, message)), table: nil, before: [])
    }

    // MARK: Operators' decisions

    /// The device `key` speaks for: the first id bound to it (a database made before keys
    /// were one-to-one may hold later ids too, rejected by the migration).
    static let deviceOfKey = "SELECT device FROM device_keys WHERE key = ? ORDER BY first_ms, device LIMIT 1"

    /// Admits `key`: listed from now on, the device it speaks for accepted, its held reports
    /// moved to the fleet's (its row made from them, with the labels its latest batch
    /// carried). Only an operator's admission (`lifting`) lifts a rejection; an admit list
    /// (`--admit-file`, `listed` admission) never admits a key an operator rejected: every
    /// statement after the first acts only when the key is listed after it.
    static func admit(key publicKey: DevicePublicKey, now: Int64, lifting: Bool) -> [SQLStatement] {
        let key = publicKey.hex
        let ofKey = "device IN (SELECT device FROM device_keys WHERE key = ? AND status = 'accepted')"
        let list =
            lifting
            ? [
                SQLStatement("DELETE FROM rejected_keys WHERE key = ?", [.text(key)]),
                SQLStatement("INSERT INTO admitted_keys (key, added_ms) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", [.text(key), .integer(now)]),
            ]
            : [
                SQLStatement(
                    "INSERT INTO admitted_keys (key, added_ms) SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM rejected_keys WHERE key = ?) "
                        + "ON CONFLICT (key) DO NOTHING", [.text(key), .integer(now), .text(key)])
            ]
        return list + [
            SQLStatement(
                "UPDATE device_keys SET status = 'accepted' WHERE key = ? AND status <> 'accepted' "
                    + "AND device = (\(deviceOfKey)) AND key IN (SELECT key FROM admitted_keys)", [.text(key), .text(key)]),
            SQLStatement(
                "INSERT INTO reports (\(ReportSQL.reportColumnList)) SELECT \(ReportSQL.reportColumnList) FROM held_reports WHERE \(ofKey) "
                    + "ON CONFLICT (device, stream, seq) DO NOTHING", [.text(key)]),
            SQLStatement(
                """
                INSERT INTO devices (app, channel, device, last_ms, running, received_ms, first_ms, labels)
                SELECT app, channel, device, time_ms, running, last_received, first_received,
                    COALESCE((SELECT l.labels FROM device_labels l WHERE l.device = latest.device), '') FROM (
                    SELECT app, channel, device, time_ms, running,
                        MAX(received_ms) OVER (PARTITION BY app, channel, device) AS last_received,
                        MIN(received_ms) OVER (PARTITION BY app, channel, device) AS first_received,
                        ROW_NUMBER() OVER (PARTITION BY app, channel, device ORDER BY time_ms DESC, seq DESC) AS rn
                    FROM reports WHERE \(ofKey)) latest
                WHERE rn = 1
                ON CONFLICT (app, channel, device) DO UPDATE SET
                    last_ms = CASE WHEN excluded.last_ms >= devices.last_ms THEN excluded.last_ms ELSE devices.last_ms END,
                    running = CASE WHEN excluded.last_ms >= devices.last_ms THEN excluded.running ELSE devices.running END,
                    received_ms = CASE WHEN excluded.received_ms >= devices.received_ms THEN excluded.received_ms ELSE devices.received_ms END,
                    first_ms = CASE WHEN devices.first_ms IS NULL OR excluded.first_ms < devices.first_ms
                        THEN excluded.first_ms ELSE devices.first_ms END,
                    labels = excluded.labels
                """, [.text(key)]),
            SQLStatement("DELETE FROM held_reports WHERE \(ofKey)", [.text(key)]),
            SQLStatement("UPDATE device_keys SET held = 0 WHERE key = ? AND status = 'accepted'", [.text(key)]),
        ]
    }

    /// The index, in ``admit(key:now:lifting:)``'s statements, of the one whose changed
    /// rows are the devices accepted now.
    static func acceptedIndex(lifting: Bool) -> Int { lifting ? 2 : 1 }

    /// Rejects `key`: no longer listed, remembered as rejected (no admit list lists it again;
    /// only `fleet admit` lifts it), its devices' batches refused, their held reports deleted.
    static func reject(key publicKey: DevicePublicKey, now: Int64) -> [SQLStatement] {
        let key = publicKey.hex
        return [
            SQLStatement("DELETE FROM admitted_keys WHERE key = ?", [.text(key)]),
            SQLStatement("DELETE FROM held_reports WHERE device IN (SELECT device FROM device_keys WHERE key = ?)", [.text(key)]),
            SQLStatement("UPDATE device_keys SET status = 'rejected', held = 0 WHERE key = ?", [.text(key)]),
            SQLStatement("INSERT INTO rejected_keys (key, rejected_ms) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", [.text(key), .integer(now)]),
        ]
    }

    /// Forgets `device`'s key (a device that lost its key file): its next batch binds again,
    /// under the collector's admission; what it reported stays.
    static func forget(device: DeviceID) -> [SQLStatement] {
        [
            SQLStatement("DELETE FROM held_reports WHERE device = ?", [.text(device.text)]),
            SQLStatement("DELETE FROM device_keys WHERE device = ?", [.text(device.text)]),
        ]
    }
}
