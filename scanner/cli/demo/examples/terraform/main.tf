# Example GPU inference estate. gpuaudit finds: an unencrypted volume, default encryption off,
# a spot cap above 0.7 x on-demand, an S3 endpoint that does not cover the GPU subnet's route
# table and has no policy, and a spot pool with one instance type.

variable "region" {
  default = "us-east-1"
}

provider "aws" {
  region = var.region
}

resource "aws_ebs_encryption_by_default" "this" {
  enabled = false
}

resource "aws_vpc" "main" {
  cidr_block = "10.30.0.0/16"
  tags       = { Name = "inference" }
}

resource "aws_subnet" "gpu" {
  vpc_id     = aws_vpc.main.id
  cidr_block = "10.30.1.0/24"
}

resource "aws_route_table" "gpu" {
  vpc_id = aws_vpc.main.id
}

resource "aws_route_table_association" "gpu" {
  subnet_id      = aws_subnet.gpu.id
  route_table_id = aws_route_table.gpu.id
}

resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.main.id
  service_name      = "com.amazonaws.${var.region}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = [aws_vpc.main.default_route_table_id]
}

resource "aws_ebs_volume" "models" {
  availability_zone = "us-east-1a"
  size              = 200
}

resource "aws_launch_template" "inference" {
  name          = "inference"
  image_id      = "ami-12c6146b"
  instance_type = "g6.xlarge"

  instance_market_options {
    market_type = "spot"
    spot_options {
      max_price = "0.75"
    }
  }

  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_size = 100
      encrypted   = true
    }
  }
}

# The group sets its spot share in its mixed instances policy, so the template it launches from
# does not request spot itself (AWS rejects a spot template there).
resource "aws_launch_template" "inference_nodes" {
  name          = "inference-nodes"
  image_id      = "ami-12c6146b"
  instance_type = "g6.xlarge"

  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_size = 100
      encrypted   = true
    }
  }
}

resource "aws_autoscaling_group" "inference" {
  name                = "inference"
  min_size            = 2
  max_size            = 8
  desired_capacity    = 4
  vpc_zone_identifier = [aws_subnet.gpu.id]

  mixed_instances_policy {
    instances_distribution {
      on_demand_base_capacity                  = 0
      on_demand_percentage_above_base_capacity = 25
      spot_allocation_strategy                 = "price-capacity-optimized"
    }
    launch_template {
      launch_template_specification {
        launch_template_id = aws_launch_template.inference_nodes.id
      }
      override {
        instance_type = "g6.xlarge"
      }
    }
  }
}
