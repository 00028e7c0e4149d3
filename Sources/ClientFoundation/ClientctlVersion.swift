/// The version string of clientctl, sent in `User-Agent` by the HTTP transport and printed
/// by `--version`.
package enum ClientctlVersion {
    package static let string = "0.1.0"
}
