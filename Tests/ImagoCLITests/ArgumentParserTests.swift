import Testing

@testable import ImagoCLI

@Suite struct ArgumentParserTests {
    let options = [
        OptionSpec("--json", help: ""),
        OptionSpec("--max-size", value: "WxH", help: ""),
        OptionSpec("--concurrency", short: "-j", value: "N", help: ""),
        OptionSpec("--list", value: "FILE", repeatable: true, help: ""),
    ]

    @Test func readsFlagsValuesAndPositionalsInAnyOrder() throws {
        let parsed = try parseArguments(
            ["a.jpg", "--json", "--max-size", "10x20", "-j", "4", "b.png", "--list=one", "--list", "two"],
            options: options)
        #expect(parsed.positionals == ["a.jpg", "b.png"])
        #expect(parsed.has("--json"))
        #expect(parsed.value("--max-size") == "10x20")
        #expect(parsed.value("--concurrency") == "4")
        #expect(parsed.values["--list"] == ["one", "two"])
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try parseArguments(["--", "--json", "-j"], options: options)
        #expect(parsed.positionals == ["--json", "-j"])
        #expect(!parsed.has("--json"))
    }

    @Test(arguments: [
        (["--nope"], "unknown option '--nope'"),
        (["--max-size"], "option '--max-size' needs a value"),
        (["--json=yes"], "option '--json' takes no value"),
        (["--max-size", "1x1", "--max-size", "2x2"], "option '--max-size' given more than once"),
    ])
    func reportsMistakesAsUsageErrors(arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try parseArguments(arguments, options: options) }
    }

    @Test func parsesPixelSizes() throws {
        #expect(try parsePixelSize("256x128", option: "--resize") == (256, 128))
        #expect(try parsePixelSize("64X64", option: "--resize") == (64, 64))
        for bad in ["256", "0x10", "-1x5", "axb", "10x", "1x2x3"] {
            #expect(throws: UsageError.self) { try parsePixelSize(bad, option: "--resize") }
        }
    }

    @Test func readsWholeNumbersWithinTheirRangeAndNamesTheOptionOtherwise() throws {
        let parsed = try parseArguments(["-j", "4", "--max-size", "300"], options: options)
        #expect(try parsed.integer("--concurrency", in: 1...8) == 4)
        #expect(try parsed.integer("--list", in: 1...8) == nil)
        #expect(throws: UsageError("option '--max-size' expects a whole number from 1 to 256 (got '300')")) {
            try parsed.integer("--max-size", in: 1...256)
        }
        let words = try parseArguments(["-j", "four"], options: options)
        #expect(throws: UsageError("option '--concurrency' expects a whole number from 1 to 8 (got 'four')")) {
            try words.integer("--concurrency", in: 1...8)
        }
    }

    @Test func parsesByteCountsWithUnits() throws {
        let cases: [(String, Int)] = [
            ("1048576", 1_048_576), ("10K", 10_240), ("10KB", 10_240), ("2M", 2 << 20), ("2mb", 2 << 20),
            ("1G", 1 << 30), ("1.5GB", 3 << 29), ("0", 0), ("512B", 512),
        ]
        for (text, expected) in cases { #expect(try parseByteCount(text, option: "--max-size") == expected, "\(text)") }
        for bad in ["", "M", "-1M", "12Q", "1e400"] {
            #expect(throws: UsageError.self) { try parseByteCount(bad, option: "--max-size") }
        }
    }
}

@Suite struct CLIUsageTests {
    @Test func noArgumentsPrintsUsageAndExitsTwo() async {
        let (console, output) = Console.capturing()
        #expect(await CLI.run([], console: console) == 2)
        #expect(output.stderr.contains("Usage: imago COMMAND"))
    }

    @Test func unknownCommandIsAUsageError() async {
        let (console, output) = Console.capturing()
        #expect(await CLI.run(["frobnicate"], console: console) == 2)
        #expect(output.stderr.contains("unknown command 'frobnicate'"))
    }

    @Test func unknownFlagGivesOneLineErrorAndUsage() async {
        let (console, output) = Console.capturing()
        #expect(await CLI.run(["decode", "--bogus", "x.jpg"], console: console) == 2)
        let lines = output.stderr.split(separator: "\n")
        #expect(lines.first == "imago decode: unknown option '--bogus'")
        #expect(output.stderr.contains("Usage: imago decode"))
        #expect(output.stdout.isEmpty)
    }

    @Test func helpListsEveryCommandAndEachCommandHasHelp() async {
        let (console, output) = Console.capturing()
        #expect(await CLI.run(["--help"], console: console) == 0)
        for command in CLI.commands {
            #expect(output.stdout.contains(command.name))
            let (c2, o2) = Console.capturing()
            #expect(await CLI.run([command.name, "--help"], console: c2) == 0)
            #expect(o2.stdout.hasPrefix("Usage: imago \(command.name)"))
        }
    }

    @Test func decodeOfMissingFileReportsItInJSONAndExitsOne() async {
        let (console, output) = Console.capturing()
        let status = await CLI.run(["decode", "/nonexistent/x.jpg", "--json"], console: console)
        #expect(status == 1)
        #expect(output.stdout.hasPrefix("{\"file\":\"/nonexistent/x.jpg\",\"error\":\"cannot read file"))
    }

    @Test func jsonStringsAreEscaped() {
        var line = JSONLine()
        line.add("k\"", "a\"b\\c\nd\u{01}")
        line.add("n", 3)
        line.add("ok", true)
        #expect(line.text == "{\"k\\\"\":\"a\\\"b\\\\c\\nd\\u0001\",\"n\":3,\"ok\":true}")
    }
}
