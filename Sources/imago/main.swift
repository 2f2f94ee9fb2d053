import ImagoCLI

#if canImport(Glibc)
    import Glibc
#endif

exit(await CLI.run(Array(CommandLine.arguments.dropFirst())))
