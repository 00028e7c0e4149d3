/// Renders JSON for people: two-space indentation, members in their stored order.
///
/// Strings and numbers are written exactly as ``CanonicalJSON`` writes them, so a pretty
/// document parses back to an equal value. What is signed is never these bytes but the
/// canonical form of the parsed value.
package enum JSONPrettyPrinter {
    /// The UTF-8 text of `value`, ending with a newline.
    package static func render(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, indent: 0, into: &out)
        out.append(0x0A)
        return out
    }

    static func write(_ value: JSONValue, indent: Int, into out: inout [UInt8]) {
        switch value {
        case .array(let elements) where !elements.isEmpty:
            out.append(UInt8(ascii: "["))
            for (k, e) in elements.enumerated() {
                out.append(contentsOf: Array((k > 0 ? ",\n" : "\n").utf8))
                pad(indent + 1, &out)
                write(e, indent: indent + 1, into: &out)
            }
            out.append(0x0A)
            pad(indent, &out)
            out.append(UInt8(ascii: "]"))
        case .object(let object) where object.count > 0:
            out.append(UInt8(ascii: "{"))
            for (k, m) in object.members.enumerated() {
                out.append(contentsOf: Array((k > 0 ? ",\n" : "\n").utf8))
                pad(indent + 1, &out)
                CanonicalJSON.writeString(m.key, into: &out)
                out.append(contentsOf: Array(": ".utf8))
                write(m.value, indent: indent + 1, into: &out)
            }
            out.append(0x0A)
            pad(indent, &out)
            out.append(UInt8(ascii: "}"))
        default:
            CanonicalJSON.write(value, into: &out)
        }
    }

    static func pad(_ level: Int, _ out: inout [UInt8]) {
        out.append(contentsOf: [UInt8](repeating: 0x20, count: level * 2))
    }
}
