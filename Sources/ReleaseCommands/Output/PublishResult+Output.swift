import ArchivePublishing
import ClientFoundation
import CommandSupport
import Foundation
import StrictJSON

/// What `clientctl publish` prints of a release it published.
extension PublishResult {
    /// Prints the result: `--json`'s object on stdout, else one line naming what was done
    /// (published, unchanged, or pending more signatures) and one line for each fact of the
    /// release a person checks (its target, cohorts, placement, pins and what a delta
    /// costs); hidden files left out go to stderr either way.
    func show(json: Bool) {
        let m = manifest
        if !skippedHidden.isEmpty {
            printError("skipped hidden files: \(skippedHidden.joined(separator: ", ")) (pass --include-hidden to publish them)")
        }
        if json {
            var o: JSONObject = [
                "app": .string(m.app), "channel": .string(m.channel), "version": .string(m.version.description),
                "unchanged": .bool(unchanged), "archive": .string(archivePath),
                "manifest": .string(manifestPath), "index": .string(indexPath),
                "sha256": .string(m.sha256), "size": .integer(m.size), "keyId": .string(m.keyId), "url": .string(m.url),
            ]
            if !deltaCosts.isEmpty {
                o["delta"] = .array(
                    deltaCosts.map { cost in
                        .object(
                            JSONObject(
                                [
                                    ("from", .string(cost.from.description)),
                                    ("bytes", .integer(cost.patchBytes ?? m.size)), ("patch", .bool(cost.patchBytes != nil)),
                                ] + (cost.skipped.map { [("skipped", JSONValue.string($0))] } ?? [])))
                    })
            }
            if let pending = pendingPath {
                o["pending"] = .string(pending)
                o["missingSignatures"] = .integer(Int64(missingSignatures))
            }
            Console.out(Data(JSONPrettyPrinter.render(.object(o))))
        } else if let pending = pendingPath {
            print(
                "pending: \(m.app) \(m.version) waits for \(missingSignatures) more release signature(s) before it is published; "
                    + "each release key holder runs: clientctl sign \(pending) --key KEY.pem")
        } else if unchanged {
            print("unchanged: \(m.app) \(m.version) is already published on \(m.channel) with identical bytes (\(archivePath))")
        } else {
            print(
                "published \(m.app) \(m.version) on \(m.channel): \(archivePath) (\(m.size) bytes, sha256 \(m.sha256)), \(SigningOptions.signedBy(m.signatures))"
            )
        }
        if !json {
            if let target = m.target { print("  for the devices of the target \(target)") }
            for cohort in m.cohorts { print("  cohort \(cohort.name): \(cohort.count) device ids, sha256 \(cohort.digest)") }
            if !m.alongside.isEmpty {
                print("  beside it, for the devices it is not for: \(m.alongside.map(\.version.description).joined(separator: ", "))")
            }
            if let rollout = m.rollout, rollout.draw != nil || rollout.from != 0 {
                let places = rollout.places(percent: rollout.highestPercent)
                print(
                    "  rollout places \(places.lowerBound)…\(places.upperBound - 1) of the draw \(rollout.drawName(version: m.version.description))"
                )
            }
            for pin in m.pins { print("  pinned to \(pin.release.version): \(pin.target)") }
            if case .success(let delta)? = m.delta, let files = delta.files {
                print(
                    "  from any older release: file list of \(files.size) bytes for \(files.count) files, "
                        + "plus the files a device does not hold")
            }
            for cost in deltaCosts {
                if let bytes = cost.patchBytes {
                    let share = String(format: "%.1f", 100 * Double(bytes) / Double(max(m.size, 1)))
                    print("  from \(cost.from): patch of \(bytes) bytes (\(share) % of the archive)")
                } else if let skipped = cost.skipped {
                    print("  from \(cost.from): full archive (\(m.size) bytes; no patch built: \(skipped))")
                } else {
                    print("  from \(cost.from): full archive (\(m.size) bytes; a patch would not be smaller)")
                }
            }
        }
    }
}
