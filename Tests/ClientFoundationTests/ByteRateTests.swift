import ClientFoundation
import Foundation
import Testing

/// `--download-rate` as a person types it: every unit, decimals, `/s`, spaces, the bounds
/// and the refusals, each with the words a person reads.
@Suite struct ByteRateTests {
    private func rate(_ text: String) -> Int64? { ByteRate(parsing: text)?.bytesPerSecond }

    @Test func everyUnitIsItsOwnPower() {
        #expect(rate("2048B") == 2048)
        #expect(rate("2kB") == 2000)
        #expect(rate("2KB") == 2000)
        #expect(rate("2MB") == 2_000_000)
        #expect(rate("2GB") == 2_000_000_000)
        #expect(rate("2KiB") == 2048)
        #expect(rate("2MiB") == 2_097_152)
        #expect(rate("2GiB") == 2_147_483_648)
        #expect(rate("20kbit") == 2500, "bits: a link speed as it is sold")
        #expect(rate("20Mbit") == 2_500_000)
        #expect(rate("2Gbit") == 250_000_000)
    }

    @Test func unitsAreCaseExact() {
        // `Mb` and `mb` are ambiguous (bits or bytes?), so they are refused, not guessed.
        for text in ["2mb", "2Mb", "2mib", "2kib", "2Kbit", "2b", "2gb"] {
            #expect(rate(text) == nil, "\(text)")
            #expect(ByteRate.problem(text)?.contains("has no known unit") == true, "\(text)")
        }
    }

    @Test func decimals() {
        #expect(rate("1.5MB") == 1_500_000)
        #expect(rate("0.5MiB") == 524_288)
        #expect(rate(".5MB") == 500_000)
        #expect(rate("2.5Mbit/s") == 312_500)
        #expect(rate("2.002kB") == 2002, "rounded to the nearest byte, not down (2.002 × 1000 is 2001.99… in binary)")
        #expect(rate("1.0000004KiB") == 1024, "a fraction of a byte is rounded away")
    }

    @Test func perSecondAndSpaces() {
        #expect(rate("2MB/s") == 2_000_000)
        #expect(rate("2 MB/s") == 2_000_000)
        #expect(rate("2MB /s") == 2_000_000)
        #expect(rate(" 2 MB/s ") == 2_000_000)
        #expect(rate("  500KiB  ") == 512_000)
        #expect(rate("2MB/s/s") == nil)
        #expect(rate("2MB/min") == nil)
        #expect(rate("2MB/S") == nil, "`/s` is lower case, as the unit names are exact")
    }

    @Test func boundsAreInclusive() {
        #expect(rate("1KiB/s") == ByteRate.minimum)
        #expect(rate("1024B") == 1024)
        #expect(rate("10GB/s") == ByteRate.maximum)
        for text in ["1023B", "1kB", "0.99KiB", "0MB", "10.000001GB", "11GB", "100Gbit", String(repeating: "9", count: 400) + "GB"] {
            #expect(rate(text) == nil, "\(text)")
            #expect(ByteRate.problem(text)?.hasSuffix("is out of range (1KiB/s to 10GB/s)") == true, "\(text)")
        }
    }

    @Test func badTextSaysWhy() {
        let notARate = "is not a rate: a number then a unit, as in 2MB/s, 500KiB/s or 20Mbit/s"
        for text in ["", " ", "/s", "MB/s", "fast", "-2MB", "+2MB", "1.2.3MB", ".MB", "1e6B", "2,5MB", "٢MB"] {
            #expect(rate(text) == nil, "\(text)")
            let problem = ByteRate.problem(text) ?? ""
            #expect(problem.hasSuffix(notARate) || problem.contains("has no known unit"), "\(text): \(problem)")
        }
        #expect(ByteRate.problem("fast") == "'fast' \(notARate)")
        #expect(
            ByteRate.problem("2") == "'2' has no known unit (B, kB, MB, GB, KiB, MiB, GiB, kbit, Mbit or Gbit, then an optional /s)")
        #expect(ByteRate.problem("1e6B")?.contains("has no known unit") == true, "no exponents: `e6B` is not a unit")
        #expect(ByteRate.problem("2MB\nrm") != nil && ByteRate.problem("2MB\nrm")?.contains("\n") == false, "one line")
        #expect(ByteRate.problem("2MB/s") == nil)
    }

    @Test func heldWithinTheBoundsWhenMadeFromANumber() {
        #expect(ByteRate(bytesPerSecond: 1).bytesPerSecond == ByteRate.minimum)
        #expect(ByteRate(bytesPerSecond: -5).bytesPerSecond == ByteRate.minimum)
        #expect(ByteRate(bytesPerSecond: .max).bytesPerSecond == ByteRate.maximum)
        #expect(ByteRate(bytesPerSecond: 5_000_000).bytesPerSecond == 5_000_000)
    }

    @Test func descriptionIsTheLargestBinaryUnit() {
        #expect(ByteRate(bytesPerSecond: 2_097_152).description == "2.0MiB/s")
        #expect(ByteRate(bytesPerSecond: 2_000_000).description == "1.9MiB/s")
        #expect(ByteRate(bytesPerSecond: 1536).description == "1.5KiB/s")
        #expect(ByteRate(bytesPerSecond: 10_000_000_000).description == "9.3GiB/s")
        // What it shows reads back as (nearly) the same rate.
        let shown = ByteRate(bytesPerSecond: 5_242_880).description
        #expect(rate(shown) == 5_242_880)
    }
}
