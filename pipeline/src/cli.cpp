#include <ksieve/filters/error.hpp>
#include <ksieve/pipeline/cli.hpp>

#include <iostream>
#include <string_view>

namespace ksieve
{

int run_cli(int argc, char ** argv)
{
    if (argc > 1 && std::string_view{argv[1]} == "--version")
    {
        std::cout << "ksieve " << KSIEVE_VERSION << '\n';
        return 0;
    }
    std::cerr << "ksieve: error: not yet\n";
    return 2;
}

} // namespace ksieve
