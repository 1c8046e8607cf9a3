// The ksieve executable: hands the command line to ksieve::run_cli (pipeline/app/src/cli.cpp).
#include <ksieve/app/cli.hpp>

int main(int argc, char ** argv)
{
    return ksieve::run_cli(argc, argv);
}
