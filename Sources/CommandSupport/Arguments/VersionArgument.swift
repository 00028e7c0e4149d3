import ArgumentParser
import ClientFoundation

/// A SemVer 2.0 version on the command line (`1.4.0`, no `v`): refused while parsing (exit 64).
extension Version: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(argument)
    }
}
