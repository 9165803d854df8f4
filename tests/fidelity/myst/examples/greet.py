from greet import command, echo, option


@command()
@option("--name", default="world")
def main(name):
    echo(f"Hello {name}!")
