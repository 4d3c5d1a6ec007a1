"""Generate a corpus of Terraform stacks for the HCL source benchmark (issue 3).

    python bench/gen_hcl_corpus.py OUTDIR --stacks 2000

Each stack is a root module directory (main.tf + variables.tf + terraform.tfvars) with 8
resources, 3 of them GPU compute: a launch template, an ASG with a mixed instances policy and an
instance; plus an EBS volume, a VPC, a subnet, a route table and an S3 gateway endpoint. The code
uses what real stacks use: variables with types and defaults, tfvars, locals, string templates,
merge(), a dynamic block, references between resources. About a third of the stacks carry
findings (unencrypted volume, spot without a max price, one instance type).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

GPU_TYPES = ["g5.xlarge", "g5.2xlarge", "g4dn.xlarge", "p3.2xlarge", "p4d.24xlarge", "g6.xlarge"]

VARIABLES = """\
variable "name" {
  type = string
}

variable "region" {
  type    = string
  default = "us-east-1"
}

variable "gpu_type" {
  type    = string
  default = "g5.xlarge"
}

variable "extra_volumes" {
  type = list(object({
    device = string
    size   = number
    type   = optional(string, "gp3")
  }))
  default = [{ device = "/dev/sdf", size = 500 }]
}

variable "on_demand_pct" {
  type    = number
  default = 30
}

variable "tags" {
  type    = map(string)
  default = {}
}
"""

MAIN = """\
locals {{
  prefix = "${{var.name}}-${{var.region}}"
  tags   = merge(var.tags, {{ Stack = var.name, ManagedBy = "terraform" }})
}}

resource "aws_vpc" "main" {{
  cidr_block           = "10.{a}.0.0/16"
  enable_dns_hostnames = true
  tags                 = merge(local.tags, {{ Name = "${{local.prefix}}-vpc" }})
}}

resource "aws_subnet" "private" {{
  vpc_id            = aws_vpc.main.id
  cidr_block        = cidrsubnet(aws_vpc.main.cidr_block, 8, 1)
  availability_zone = "${{var.region}}a"
  tags              = local.tags
}}

resource "aws_route_table" "private" {{
  vpc_id = aws_vpc.main.id
  tags   = merge(local.tags, {{ Name = "${{local.prefix}}-private" }})
}}

resource "aws_vpc_endpoint" "s3" {{
  vpc_id            = aws_vpc.main.id
  service_name      = "com.amazonaws.${{var.region}}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = [aws_route_table.private.id]
  policy = jsonencode({{
    Version = "2012-10-17"
    Statement = [{{
      Effect    = "Allow"
      Principal = "*"
      Action    = ["s3:GetObject", "s3:PutObject"]
      Resource  = ["arn:aws:s3:::${{var.name}}-data/*"]
    }}]
  }})
}}

resource "aws_ebs_volume" "data" {{
  availability_zone = "${{var.region}}a"
  size              = {size}
  type              = "gp3"
  encrypted         = {encrypted}
  tags              = local.tags
}}

resource "aws_launch_template" "gpu" {{
  name          = "${{local.prefix}}-gpu"
  image_id      = "ami-0123456789abcdef0"
  instance_type = var.gpu_type

  block_device_mappings {{
    device_name = "/dev/xvda"
    ebs {{
      volume_size = 100
      encrypted   = true
    }}
  }}

  dynamic "block_device_mappings" {{
    for_each = var.extra_volumes
    content {{
      device_name = block_device_mappings.value.device
      ebs {{
        volume_size = block_device_mappings.value.size
        volume_type = block_device_mappings.value.type
        encrypted   = {lt_encrypted}
      }}
    }}
  }}

  instance_market_options {{
    market_type = "spot"
    spot_options {{
{max_price}    }}
  }}

  tag_specifications {{
    resource_type = "instance"
    tags          = local.tags
  }}
}}

resource "aws_autoscaling_group" "gpu" {{
  name                = "${{local.prefix}}-gpu"
  min_size            = 0
  max_size            = 10
  desired_capacity    = {desired}
  vpc_zone_identifier = [aws_subnet.private.id]

  mixed_instances_policy {{
    instances_distribution {{
      on_demand_base_capacity                  = 0
      on_demand_percentage_above_base_capacity = var.on_demand_pct
      spot_allocation_strategy                 = "price-capacity-optimized"
    }}
    launch_template {{
      launch_template_specification {{
        launch_template_id = aws_launch_template.gpu.id
        version            = "$Latest"
      }}
{overrides}    }}
  }}

  tag {{
    key                 = "Name"
    value               = "${{local.prefix}}-gpu"
    propagate_at_launch = true
  }}
}}

resource "aws_instance" "trainer" {{
  ami           = "ami-0123456789abcdef0"
  instance_type = var.gpu_type
  subnet_id     = aws_subnet.private.id

  root_block_device {{
    volume_size = 200
    encrypted   = true
  }}

  tags = merge(local.tags, {{ Name = "${{local.prefix}}-trainer" }})
}}
"""


def stack(i: int, rng: random.Random) -> dict[str, str]:
    gpu = rng.choice(GPU_TYPES)
    bad = i % 3 == 0
    overrides = "".join(
        f'      override {{\n        instance_type = "{t}"\n      }}\n'
        for t in ([gpu] if bad else [gpu, rng.choice(GPU_TYPES)])
    )
    main = MAIN.format(
        a=i % 250,
        size=rng.choice([100, 500, 1000]),
        encrypted="false" if bad else "true",
        lt_encrypted="false" if bad else "true",
        max_price="" if bad else '      max_price = "0.50"\n',
        desired=rng.choice([2, 4, 10]),
        overrides=overrides,
    )
    tfvars = f'name     = "stack-{i:05d}"\ngpu_type = "{gpu}"\ntags     = {{ Team = "ml" }}\n'
    return {"main.tf": main, "variables.tf": VARIABLES, "terraform.tfvars": tfvars}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--stacks", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    for i in range(args.stacks):
        d = args.outdir / f"stack-{i:05d}"
        d.mkdir(parents=True, exist_ok=True)
        for name, text in stack(i, rng).items():
            (d / name).write_text(text, encoding="utf-8")
    print(f"wrote {args.stacks} stacks to {args.outdir}")


if __name__ == "__main__":
    main()
